//! Schedule arithmetic: when a schedule fires, told from a time the caller passes (no clock is
//! read here, so tests move time by hand).
//!
//! Daylight-saving changes, for a cron read in a time zone that has them:
//! - a local time that does not exist (02:30 on a spring-forward day) fires once, at the first
//!   valid time after the gap (03:00 local);
//! - a local time that happens twice (01:30 on a fall-back day) fires once, at its first
//!   occurrence.

use super::words;
use chrono::{DateTime, Duration, SecondsFormat, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::CronParser;
use qilin_protocol::schedules::{CreateSchedule, ScheduleRecord};

/// The shortest interval `every` accepts, in seconds.
pub const MIN_INTERVAL_SECONDS: u64 = 60;

/// The names of a cron expression's five fields, in order.
const CRON_FIELDS: [&str; 5] = ["minute", "hour", "day of month", "month", "day of week"];

/// Why a schedule was refused: what is wrong and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScheduleError(pub String);

fn refuse(message: impl Into<String>) -> ScheduleError {
    ScheduleError(message.into())
}

/// How often a schedule fires.
#[derive(Debug, Clone)]
pub enum Cadence {
    /// A five-field cron expression, read in a time zone.
    Cron {
        /// The parsed expression.
        cron: Box<Cron>,
        /// The expression as written.
        expression: String,
        /// The zone it is read in.
        zone: Tz,
    },
    /// Every so many seconds, counted from an anchor (the schedule's creation).
    Every {
        /// The interval.
        seconds: u64,
        /// The time the intervals are counted from.
        anchor: DateTime<Utc>,
    },
    /// Once, at a time.
    At(DateTime<Utc>),
}

/// A schedule's timing: its cadence and when it stops.
#[derive(Debug, Clone)]
pub struct Timing {
    /// How often it fires.
    pub cadence: Cadence,
    /// After this it fires no more.
    pub expires: Option<DateTime<Utc>>,
}

/// Parses an RFC 3339 time, naming the field it came from when it is not one.
pub fn parse_time(field: &str, text: &str) -> Result<DateTime<Utc>, ScheduleError> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|time| time.with_timezone(&Utc))
        .map_err(|err| {
            refuse(format!(
                "`{field}` is `{text}`, not a time: expected RFC 3339 like 2030-01-31T09:00:00Z ({err})"
            ))
        })
}

/// Formats a time as the wire does: RFC 3339 UTC, whole seconds.
pub fn format_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parses an IANA time zone name.
pub fn parse_zone(name: &str) -> Result<Tz, ScheduleError> {
    name.trim().parse::<Tz>().map_err(|_| {
        refuse(format!(
            "unknown time zone `{name}`: expected an IANA name like `UTC` or `Europe/Paris`"
        ))
    })
}

/// Parses an interval: "90s", "15m", "2h", "1d" or a number of seconds.
pub fn parse_every(text: &str) -> Result<u64, ScheduleError> {
    let trimmed = text.trim();
    let (digits, unit) = match trimmed.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => trimmed.split_at(at),
        None => (trimmed, "s"),
    };
    let scale = match unit.trim() {
        "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        _ => 0,
    };
    let count: Option<u64> = digits.parse().ok();
    match (count, scale) {
        (Some(count), scale) if scale > 0 => count
            .checked_mul(scale)
            .ok_or_else(|| refuse(format!("`every` is `{text}`: too long an interval"))),
        _ => Err(refuse(format!(
            "`every` is `{text}`: expected a number with a unit, like \"90s\", \"15m\", \"2h\" or \"1d\", or a number of seconds"
        ))),
    }
}

/// Parses a five-field cron expression, naming the field that is wrong.
pub fn parse_cron(expression: &str) -> Result<Cron, ScheduleError> {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(refuse(format!(
            "cron `{expression}` has {} fields: expected five (minute hour day-of-month month day-of-week), like `0 9 * * 1-5`",
            fields.len()
        )));
    }
    let parser = CronParser::builder()
        .seconds(croner::parser::Seconds::Disallowed)
        .build();
    for (index, field) in fields.iter().enumerate() {
        let mut probe = ["*"; 5];
        probe[index] = field;
        if let Err(err) = parser.parse(&probe.join(" ")) {
            return Err(refuse(format!(
                "cron `{expression}`: the {} field `{field}` is invalid ({err})",
                CRON_FIELDS[index]
            )));
        }
    }
    parser
        .parse(expression)
        .map_err(|err| refuse(format!("cron `{expression}` is invalid: {err}")))
}

impl Timing {
    /// The timing a stored schedule describes.
    pub fn of_record(record: &ScheduleRecord) -> Result<Self, ScheduleError> {
        let anchor = parse_time("createdAt", &record.created_at)?;
        let cadence = match (&record.cron, record.every_seconds, &record.at) {
            (Some(expression), None, None) => Cadence::Cron {
                cron: Box::new(parse_cron(expression)?),
                expression: expression.clone(),
                zone: parse_zone(&record.timezone)?,
            },
            (None, Some(seconds), None) => Cadence::Every { seconds, anchor },
            (None, None, Some(at)) => Cadence::At(parse_time("at", at)?),
            _ => {
                return Err(refuse(
                    "a schedule needs exactly one of `cron`, `every` and `at`",
                ));
            }
        };
        let expires = record
            .expires
            .as_deref()
            .map(|text| parse_time("expires", text))
            .transpose()?;
        Ok(Timing { cadence, expires })
    }

    /// The first fire strictly after `after`, if any (none past `expires`).
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let next = match &self.cadence {
            Cadence::Cron { cron, zone, .. } => cron
                .find_next_occurrence(&after.with_timezone(zone), false)
                .ok()
                .map(|time| time.with_timezone(&Utc)),
            Cadence::Every { seconds, anchor } => {
                let step = i64::try_from(*seconds).ok()?.max(1);
                let elapsed = (after - *anchor).num_seconds();
                let steps = if elapsed < 0 { 1 } else { elapsed / step + 1 };
                anchor.checked_add_signed(Duration::seconds(steps.checked_mul(step)?))
            }
            Cadence::At(at) => (*at > after).then_some(*at),
        }?;
        match self.expires {
            Some(expires) if next > expires => None,
            _ => Some(next),
        }
    }

    /// The next `count` fires after `after`.
    pub fn next_fires(&self, after: DateTime<Utc>, count: usize) -> Vec<DateTime<Utc>> {
        let mut fires = Vec::with_capacity(count);
        let mut from = after;
        while fires.len() < count {
            match self.next_after(from) {
                Some(next) => {
                    fires.push(next);
                    from = next;
                }
                None => break,
            }
        }
        fires
    }

    /// The schedule in words, the time zone named when it is not UTC: "every weekday at
    /// 09:00 (Europe/Paris)", "every 15 minutes", "once at 2026-12-24 18:00 (Europe/Paris)"
    /// (see [`words`](super::words)).
    pub fn description(&self, zone: Tz) -> String {
        match &self.cadence {
            Cadence::Cron {
                expression, zone, ..
            } => words::describe_cron(expression, *zone),
            Cadence::Every { seconds, .. } => words::describe_every(*seconds),
            Cadence::At(at) => words::describe_at(*at, zone),
        }
    }
}

/// What a valid `schedule_create` becomes, before the store gives it an id.
#[derive(Debug, Clone)]
pub struct Planned {
    /// The record's fields (`id` and `sessionId` are left for the caller to set).
    pub record: ScheduleRecord,
    /// Its first fire.
    pub first_fire: DateTime<Utc>,
}

/// Checks a request to create a schedule at `now`, refusing what cannot be honoured: an invalid
/// cron (naming the field), a time in the past, an interval under `min_interval` seconds, an
/// unknown time zone, `expires` before the first fire.
pub fn plan(
    request: &CreateSchedule,
    now: DateTime<Utc>,
    min_interval: u64,
) -> Result<Planned, ScheduleError> {
    if request.prompt.trim().is_empty() {
        return Err(refuse(
            "`prompt` is empty: expected what each run should ask",
        ));
    }
    let timezone = request
        .timezone
        .as_deref()
        .unwrap_or("UTC")
        .trim()
        .to_string();
    let zone = parse_zone(&timezone)?;
    let mut record = ScheduleRecord {
        id: String::new(),
        session_id: String::new(),
        prompt: request.prompt.clone(),
        cron: None,
        every_seconds: None,
        at: None,
        timezone: zone.name().to_string(),
        description: String::new(),
        agent: request
            .agent
            .clone()
            .filter(|agent| !agent.trim().is_empty()),
        target: request.target.unwrap_or_default(),
        catch_up: request.catch_up.unwrap_or_default(),
        expires: None,
        status: qilin_protocol::schedules::ScheduleStatus::Active,
        created_at: format_time(now),
        next_fires: Vec::new(),
        last_run: None,
        runs: 0,
    };
    match (&request.cron, &request.every, &request.at) {
        (Some(cron), None, None) => {
            parse_cron(cron)?;
            record.cron = Some(cron.split_whitespace().collect::<Vec<_>>().join(" "));
        }
        (None, Some(every), None) => {
            let seconds = parse_every(every)?;
            if seconds < min_interval {
                return Err(refuse(format!(
                    "`every` is `{every}` ({seconds} s): expected at least {min_interval} seconds"
                )));
            }
            record.every_seconds = Some(seconds);
        }
        (None, None, Some(at)) => {
            let time = parse_time("at", at)?;
            if time <= now {
                return Err(refuse(format!(
                    "`at` is {}, in the past (now is {}): expected a future time",
                    format_time(time),
                    format_time(now)
                )));
            }
            record.at = Some(format_time(time));
        }
        _ => {
            return Err(refuse(
                "expected exactly one of `cron` (like \"0 9 * * 1-5\"), `every` (like \"15m\") and `at` (an RFC 3339 time)",
            ));
        }
    }
    let unbounded = Timing::of_record(&record)?;
    let first_fire = unbounded.next_after(now).ok_or_else(|| {
        refuse("this schedule never fires: expected a cron that matches some future time")
    })?;
    if let Some(expires) = &request.expires {
        let expires = parse_time("expires", expires)?;
        if expires < first_fire {
            return Err(refuse(format!(
                "`expires` is {}, before the first fire at {}: expected a later time",
                format_time(expires),
                format_time(first_fire)
            )));
        }
        record.expires = Some(format_time(expires));
    }
    let timing = Timing::of_record(&record)?;
    record.description = timing.description(zone);
    record.next_fires = timing
        .next_fires(now, 3)
        .into_iter()
        .map(format_time)
        .collect();
    Ok(Planned { record, first_fire })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use qilin_protocol::schedules::CreateSchedule;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).single().unwrap()
    }

    fn cron(expression: &str, zone: &str) -> CreateSchedule {
        CreateSchedule {
            prompt: "check the build".into(),
            cron: Some(expression.into()),
            timezone: Some(zone.into()),
            ..CreateSchedule::default()
        }
    }

    fn fires(request: &CreateSchedule, now: DateTime<Utc>, count: usize) -> Vec<String> {
        let planned = plan(request, now, MIN_INTERVAL_SECONDS).unwrap();
        Timing::of_record(&planned.record)
            .unwrap()
            .next_fires(now, count)
            .into_iter()
            .map(format_time)
            .collect()
    }

    #[test]
    fn weekday_cron_in_a_zone() {
        // Friday 2030-01-04 12:00 UTC; Paris is UTC+1 in winter.
        let planned = plan(
            &cron("0 9 * * 1-5", "Europe/Paris"),
            utc(2030, 1, 4, 12, 0),
            60,
        )
        .unwrap();
        assert_eq!(
            planned.record.next_fires,
            [
                "2030-01-07T08:00:00Z",
                "2030-01-08T08:00:00Z",
                "2030-01-09T08:00:00Z"
            ]
        );
        assert_eq!(
            planned.record.description,
            "every weekday at 09:00 (Europe/Paris)"
        );
    }

    #[test]
    fn spring_forward_fires_once_after_the_gap() {
        // 2030-03-31: Paris moves from 02:00 to 03:00 (UTC+1 to UTC+2); 02:30 does not exist.
        let got = fires(
            &cron("30 2 * * *", "Europe/Paris"),
            utc(2030, 3, 30, 12, 0),
            3,
        );
        assert_eq!(
            got,
            [
                // 03:00 CEST, the first valid time after the gap, once.
                "2030-03-31T01:00:00Z",
                "2030-04-01T00:30:00Z",
                "2030-04-02T00:30:00Z"
            ]
        );
    }

    #[test]
    fn fall_back_fires_once() {
        // 2030-10-27: Paris goes from 03:00 back to 02:00; 02:30 happens twice.
        let got = fires(
            &cron("30 2 * * *", "Europe/Paris"),
            utc(2030, 10, 26, 12, 0),
            3,
        );
        assert_eq!(
            got,
            [
                "2030-10-27T00:30:00Z",
                "2030-10-28T01:30:00Z",
                "2030-10-29T01:30:00Z"
            ]
        );
    }

    #[test]
    fn intervals_count_from_creation() {
        let now = utc(2030, 1, 1, 10, 0);
        let request = CreateSchedule {
            prompt: "p".into(),
            every: Some("15m".into()),
            ..CreateSchedule::default()
        };
        let planned = plan(&request, now, 60).unwrap();
        assert_eq!(planned.record.every_seconds, Some(900));
        assert_eq!(planned.record.description, "every 15 minutes");
        assert_eq!(planned.first_fire, utc(2030, 1, 1, 10, 15));
        let timing = Timing::of_record(&planned.record).unwrap();
        // Late by 40 minutes: the next fire stays on the grid.
        assert_eq!(
            timing.next_after(utc(2030, 1, 1, 10, 40)),
            Some(utc(2030, 1, 1, 10, 45))
        );
        assert_eq!(parse_every("90s").unwrap(), 90);
        assert_eq!(parse_every("2h").unwrap(), 7200);
        assert_eq!(parse_every("120").unwrap(), 120);
        assert_eq!(parse_every("1d").unwrap(), 86_400);
    }

    #[test]
    fn at_fires_once() {
        let now = utc(2030, 1, 1, 10, 0);
        let request = CreateSchedule {
            prompt: "p".into(),
            at: Some("2030-01-01T12:00:00+01:00".into()),
            ..CreateSchedule::default()
        };
        let planned = plan(&request, now, 60).unwrap();
        assert_eq!(planned.record.at.as_deref(), Some("2030-01-01T11:00:00Z"));
        assert_eq!(planned.record.next_fires, ["2030-01-01T11:00:00Z"]);
        let timing = Timing::of_record(&planned.record).unwrap();
        assert_eq!(timing.next_after(utc(2030, 1, 1, 11, 0)), None);
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let now = utc(2030, 1, 1, 10, 0);
        let err = plan(&cron("0 25 * * *", "UTC"), now, 60).unwrap_err();
        assert!(err.0.contains("hour field `25`"), "{err}");
        let err = plan(&cron("0 9 * *", "UTC"), now, 60).unwrap_err();
        assert!(err.0.contains("expected five"), "{err}");
        let err = plan(&cron("0 9 * * 1-5", "Mars/Olympus"), now, 60).unwrap_err();
        assert!(err.0.contains("unknown time zone `Mars/Olympus`"), "{err}");
        let past = CreateSchedule {
            prompt: "p".into(),
            at: Some("2029-12-31T10:00:00Z".into()),
            ..CreateSchedule::default()
        };
        assert!(plan(&past, now, 60).unwrap_err().0.contains("in the past"));
        let fast = CreateSchedule {
            prompt: "p".into(),
            every: Some("30s".into()),
            ..CreateSchedule::default()
        };
        let err = plan(&fast, now, 60).unwrap_err();
        assert!(err.0.contains("at least 60 seconds"), "{err}");
        assert!(plan(&fast, now, 1).is_ok());
        let bad_unit = CreateSchedule {
            prompt: "p".into(),
            every: Some("5 fortnights".into()),
            ..CreateSchedule::default()
        };
        assert!(plan(&bad_unit, now, 60).unwrap_err().0.contains("\"15m\""));
        let early_expiry = CreateSchedule {
            expires: Some("2030-01-01T10:30:00Z".into()),
            ..cron("0 9 * * *", "UTC")
        };
        let err = plan(&early_expiry, now, 60).unwrap_err();
        assert!(err.0.contains("before the first fire"), "{err}");
        let both = CreateSchedule {
            every: Some("1h".into()),
            ..cron("0 9 * * *", "UTC")
        };
        assert!(plan(&both, now, 60).unwrap_err().0.contains("exactly one"));
    }

    #[test]
    fn expiry_ends_the_fires() {
        let now = utc(2030, 1, 1, 10, 0);
        let request = CreateSchedule {
            expires: Some("2030-01-02T09:30:00Z".into()),
            ..cron("0 9 * * *", "UTC")
        };
        let planned = plan(&request, now, 60).unwrap();
        assert_eq!(planned.record.next_fires, ["2030-01-02T09:00:00Z"]);
    }
}
