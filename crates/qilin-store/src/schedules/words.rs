//! A schedule in words, our own: "every weekday at 09:00 (Europe/Paris)", "every 15 minutes",
//! "on the 1st of every month at 00:00", "once at 2026-12-24 18:00 (Europe/Paris)". A cron
//! none of the common forms fits is told field by field ("cron `…`: minute 0-10/2, hour 9").
//! The time zone is named when it is not UTC.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// The most fire times a day a description lists before telling the fields instead.
const MAX_TIMES: usize = 6;

const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The three-letter names cron accepts for the days of the week, Sunday first.
const WEEKDAY_NAMES: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

/// The three-letter names cron accepts for the months, January first.
const MONTH_NAMES: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// ` (Zone)` for a zone other than UTC; nothing for UTC.
fn zone_suffix(zone: Tz) -> String {
    match zone.name() {
        "UTC" | "Etc/UTC" => String::new(),
        name => format!(" ({name})"),
    }
}

/// A five-field cron expression read in `zone`, in words.
pub fn describe_cron(expression: &str, zone: Tz) -> String {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    let words = match fields.as_slice() {
        [minute, hour, day, month, weekday] => common_form(minute, hour, day, month, weekday),
        _ => None,
    };
    match words {
        Some(words) => format!("{words}{}", zone_suffix(zone)),
        None => format!("{}{}", field_by_field(&fields), zone_suffix(zone)),
    }
}

/// An interval in words: "every 90 seconds", "every 15 minutes", "every hour", "every 2 days".
pub fn describe_every(seconds: u64) -> String {
    let (count, unit) = if seconds.is_multiple_of(86_400) {
        (seconds / 86_400, "day")
    } else if seconds.is_multiple_of(3600) {
        (seconds / 3600, "hour")
    } else if seconds.is_multiple_of(60) {
        (seconds / 60, "minute")
    } else {
        (seconds, "second")
    };
    match count {
        1 => format!("every {unit}"),
        _ => format!("every {count} {unit}s"),
    }
}

/// A single fire at `at`, told in `zone`: "once at 2026-12-24 18:00 (Europe/Paris)".
pub fn describe_at(at: DateTime<Utc>, zone: Tz) -> String {
    let local = at.with_timezone(&zone);
    let format = match local.format("%S").to_string().as_str() {
        "00" => "%Y-%m-%d %H:%M",
        _ => "%Y-%m-%d %H:%M:%S",
    };
    format!("once at {}{}", local.format(format), zone_suffix(zone))
}

/// The common forms of a cron, or `None` for the field-by-field text.
fn common_form(minute: &str, hour: &str, day: &str, month: &str, weekday: &str) -> Option<String> {
    let every_day = day == "*" && month == "*" && weekday == "*";
    if every_day && hour == "*" {
        return match minute {
            "*" => Some("every minute".to_string()),
            _ => match minute.strip_prefix("*/").and_then(number) {
                Some(1) => Some("every minute".to_string()),
                Some(step) => Some(format!("every {step} minutes")),
                None => number(minute).map(|at| format!("every hour at minute {at}")),
            },
        };
    }
    if every_day && let Some(step) = hour.strip_prefix("*/").and_then(number) {
        let at = number(minute)?;
        return Some(match step {
            1 => format!("every hour at minute {at}"),
            _ => format!("every {step} hours at minute {at}"),
        });
    }
    let times = times(minute, hour)?;
    match (day, month, weekday) {
        ("*", "*", "*") => Some(format!("every day at {times}")),
        ("*", "*", days) => {
            let days = values(days, 0, 7, &WEEKDAY_NAMES, 0)?;
            let mut days: Vec<u32> = days.into_iter().map(|day| day % 7).collect();
            days.sort_unstable();
            days.dedup();
            let named = match days.as_slice() {
                [1, 2, 3, 4, 5] => "weekday".to_string(),
                [0, 6] => "Saturday and Sunday".to_string(),
                [0, 1, 2, 3, 4, 5, 6] => "day".to_string(),
                _ => list(days.iter().map(|&day| WEEKDAYS[day as usize].to_string())),
            };
            Some(format!("every {named} at {times}"))
        }
        (days, months, "*") => {
            let days = values(days, 1, 31, &[], 1)?;
            let days = list(days.into_iter().map(ordinal));
            match months {
                "*" => Some(format!("on the {days} of every month at {times}")),
                months => {
                    let months = values(months, 1, 12, &MONTH_NAMES, 1)?;
                    let months = list(
                        months
                            .into_iter()
                            .map(|month| MONTHS[(month - 1) as usize].to_string()),
                    );
                    Some(format!("on the {days} of {months} at {times}"))
                }
            }
        }
        _ => None,
    }
}

/// The times of day the minute and hour fields name, in words ("09:00 and 17:00"), when they
/// name a few.
fn times(minute: &str, hour: &str) -> Option<String> {
    let minutes = values(minute, 0, 59, &[], 0)?;
    let hours = values(hour, 0, 23, &[], 0)?;
    if minutes.len() * hours.len() > MAX_TIMES {
        return None;
    }
    let mut times: Vec<(u32, u32)> = hours
        .iter()
        .flat_map(|&hour| minutes.iter().map(move |&minute| (hour, minute)))
        .collect();
    times.sort_unstable();
    Some(list(
        times
            .into_iter()
            .map(|(hour, minute)| format!("{hour:02}:{minute:02}")),
    ))
}

/// The values a field lists — numbers, names and ranges, comma-separated, within `low..=high`
/// — or `None` for a field with steps or wildcards. `names` are the field's names, the first
/// standing for `first`.
fn values(field: &str, low: u32, high: u32, names: &[&str], first: u32) -> Option<Vec<u32>> {
    let value = |text: &str| -> Option<u32> {
        let lower = text.to_ascii_lowercase();
        let named = names
            .iter()
            .position(|name| *name == lower)
            .and_then(|index| u32::try_from(index).ok())
            .map(|index| index + first);
        named
            .or_else(|| number(text))
            .filter(|value| (low..=high).contains(value))
    };
    let mut found = Vec::new();
    for part in field.split(',') {
        match part.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (value(from)?, value(to)?);
                if from > to {
                    return None;
                }
                found.extend(from..=to);
            }
            None => found.push(value(part)?),
        }
    }
    found.sort_unstable();
    found.dedup();
    Some(found)
}

/// A plain decimal number.
fn number(text: &str) -> Option<u32> {
    match !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) {
        true => text.parse().ok(),
        false => None,
    }
}

/// "1st", "2nd", "3rd", "4th", "11th", "21st".
fn ordinal(day: u32) -> String {
    let suffix = match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{day}{suffix}")
}

/// "a", "a and b", "a, b and c".
fn list(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// A cron no common form fits, field by field: "cron `0-10/2 9 * 1-6 1`: minute 0-10/2, hour 9,
/// month 1-6, day of week 1" (fields that match anything left out).
fn field_by_field(fields: &[&str]) -> String {
    let names = ["minute", "hour", "day of month", "month", "day of week"];
    let parts: Vec<String> = names
        .iter()
        .zip(fields)
        .filter(|(_, field)| **field != "*")
        .map(|(name, field)| format!("{name} {field}"))
        .collect();
    let expression = fields.join(" ");
    match parts.is_empty() {
        true => format!("cron `{expression}`"),
        false => format!("cron `{expression}`: {}", parts.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn cron(expression: &str) -> String {
        describe_cron(expression, Tz::UTC)
    }

    #[test]
    fn weekdays() {
        assert_eq!(cron("0 9 * * 1-5"), "every weekday at 09:00");
        assert_eq!(cron("0 9 * * MON-FRI"), "every weekday at 09:00");
        assert_eq!(
            describe_cron("0 9 * * 1-5", chrono_tz::Europe::Paris),
            "every weekday at 09:00 (Europe/Paris)"
        );
    }

    #[test]
    fn every_so_many_minutes() {
        assert_eq!(cron("*/15 * * * *"), "every 15 minutes");
        assert_eq!(cron("* * * * *"), "every minute");
        assert_eq!(cron("15 * * * *"), "every hour at minute 15");
        assert_eq!(cron("0 */2 * * *"), "every 2 hours at minute 0");
    }

    #[test]
    fn several_times_a_day() {
        assert_eq!(cron("0 9,17 * * *"), "every day at 09:00 and 17:00");
        assert_eq!(
            cron("30 8,12,18 * * *"),
            "every day at 08:30, 12:30 and 18:30"
        );
    }

    #[test]
    fn days_of_the_month() {
        assert_eq!(cron("0 0 1 * *"), "on the 1st of every month at 00:00");
        assert_eq!(
            cron("0 6 1,15 * *"),
            "on the 1st and 15th of every month at 06:00"
        );
        assert_eq!(cron("0 18 24 12 *"), "on the 24th of December at 18:00");
        assert_eq!(
            cron("0 0 1 jan,jul *"),
            "on the 1st of January and July at 00:00"
        );
    }

    #[test]
    fn days_of_the_week() {
        assert_eq!(cron("30 8 * * 1"), "every Monday at 08:30");
        assert_eq!(cron("0 10 * * 1,5"), "every Monday and Friday at 10:00");
        assert_eq!(cron("0 10 * * 0,6"), "every Saturday and Sunday at 10:00");
        assert_eq!(cron("0 10 * * 7"), "every Sunday at 10:00");
    }

    #[test]
    fn once() {
        let at = Utc
            .with_ymd_and_hms(2026, 12, 24, 17, 0, 0)
            .single()
            .unwrap();
        assert_eq!(
            describe_at(at, chrono_tz::Europe::Paris),
            "once at 2026-12-24 18:00 (Europe/Paris)"
        );
        assert_eq!(describe_at(at, Tz::UTC), "once at 2026-12-24 17:00");
    }

    #[test]
    fn intervals() {
        assert_eq!(describe_every(90), "every 90 seconds");
        assert_eq!(describe_every(900), "every 15 minutes");
        assert_eq!(describe_every(3600), "every hour");
        assert_eq!(describe_every(5400), "every 90 minutes");
        assert_eq!(describe_every(172_800), "every 2 days");
    }

    #[test]
    fn anything_else_is_told_field_by_field() {
        assert_eq!(
            cron("0-10/2 9 * 1-6 1"),
            "cron `0-10/2 9 * 1-6 1`: minute 0-10/2, hour 9, month 1-6, day of week 1"
        );
        assert_eq!(
            describe_cron("0 9 1 * 1", chrono_tz::Asia::Tokyo),
            "cron `0 9 1 * 1`: minute 0, hour 9, day of month 1, day of week 1 (Asia/Tokyo)"
        );
        assert_eq!(
            cron("*/5 9-17 * * *"),
            "cron `*/5 9-17 * * *`: minute */5, hour 9-17"
        );
    }
}
