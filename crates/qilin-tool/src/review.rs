//! The reviewer: the policy step of the execution layer, between validation and execution.

use crate::Caller;
use futures_util::future::BoxFuture;
use regex::Regex;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// A call as the reviewer sees it, after its arguments were validated.
#[derive(Debug, Clone, Copy)]
pub struct ReviewRequest<'a> {
    /// The tool's wire name.
    pub tool: &'a str,
    /// The validated arguments.
    pub arguments: &'a Value,
    /// Which entry the call came through.
    pub caller: &'a Caller,
    /// What the tool says of its effects (a built-in's `read_only`, an MCP server's
    /// annotations), when it says.
    pub effect: Option<ToolEffect>,
}

/// What a tool declares about its effects on the world: a built-in tool's `read_only`, or an
/// MCP server's annotations (`readOnlyHint`, `destructiveHint`); review rules can match on it
/// with `effect:`, and the calls of one step run side by side only when they are read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    /// It changes nothing (`readOnlyHint: true`).
    ReadOnly,
    /// It changes things but only adds (`readOnlyHint: false`, `destructiveHint: false`).
    Additive,
    /// It may change or delete what exists (`destructiveHint: true`, and MCP's default for a
    /// tool that is not read-only).
    Destructive,
}

impl ToolEffect {
    /// The effect MCP's annotations imply, by the protocol's defaults: read-only only when
    /// said, and destructive unless `destructiveHint` is `false`.
    pub fn from_hints(read_only: Option<bool>, destructive: Option<bool>) -> ToolEffect {
        match (read_only, destructive) {
            (Some(true), _) => ToolEffect::ReadOnly,
            (_, Some(false)) => ToolEffect::Additive,
            _ => ToolEffect::Destructive,
        }
    }

    /// The word agent files use for it: `read_only`, `additive`, `destructive`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolEffect::ReadOnly => "read_only",
            ToolEffect::Additive => "additive",
            ToolEffect::Destructive => "destructive",
        }
    }
}

/// What a reviewer decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewDecision {
    /// Run the call.
    Allow,
    /// Refuse it; the reason is told to the model.
    Deny {
        /// Why, in words the model can act on.
        reason: String,
    },
    /// Ask a person; the execution layer opens an approval request and the call waits for it
    /// (or, where no one can answer, sends it to the reviewer model when the agent has one,
    /// else refuses it).
    Ask {
        /// Why the policy asks, shown to the person.
        reason: String,
    },
    /// Send the call to the reviewer model (`review.auto`), which allows or denies it.
    Auto {
        /// Why the policy sends it there (the matching rule's reason).
        reason: String,
    },
}

/// Decides whether a call may run. Asynchronous so that a reviewer may ask a person.
pub trait Reviewer: Send + Sync {
    /// Reviews one call.
    fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, ReviewDecision>;
}

/// The reviewer that allows everything.
pub struct AllowAll;

impl Reviewer for AllowAll {
    fn review<'a>(&'a self, _request: ReviewRequest<'a>) -> BoxFuture<'a, ReviewDecision> {
        Box::pin(std::future::ready(ReviewDecision::Allow))
    }
}

/// A rule's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Let the call run.
    #[default]
    Allow,
    /// Refuse the call.
    Deny,
    /// Ask the user (an approval request); where no one can answer, the reviewer model
    /// decides when the agent has one (`review.auto`), else the call is refused.
    Ask,
    /// The reviewer model (`review.auto`) decides.
    Auto,
}

/// One rule of a policy, as written in an agent file's `review:` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRule {
    /// The tool's wire name, `*` for every tool, or a prefix ending in `*` (`web_*`).
    pub tool: String,
    /// Argument paths (dotted: `command`, `options.mode`) and regular expressions their
    /// values must match; every entry must match for the rule to apply.
    #[serde(default)]
    pub when: BTreeMap<String, String>,
    /// The effect the tool declares (`read_only`, `additive`, `destructive`: a built-in's
    /// `read_only` or an MCP server's annotations); a tool that declares none never matches a
    /// rule that names one.
    #[serde(default)]
    pub effect: Option<ToolEffect>,
    /// What to do with a matching call.
    pub decision: Verdict,
    /// Told to the model when the rule denies, and to the user when it asks.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A rule-based policy as written in an agent file: rules in order, first match wins.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// The verdict when no rule matches.
    #[serde(default)]
    pub default: Verdict,
    /// The rules, tried in order.
    #[serde(default)]
    pub rules: Vec<PolicyRule>,
    /// The reviewer model the `auto` decision (and an unattended `ask`) sends calls to.
    #[serde(default)]
    pub auto: Option<AutoReviewConfig>,
}

/// How long the reviewer model may take over one call when `review.auto.timeout` is not set.
pub const DEFAULT_AUTO_REVIEW_TIMEOUT: Duration = Duration::from_secs(90);

/// The reviewer model of an agent file's `review.auto`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoReviewConfig {
    /// The reviewer's model, written as `model:` is (`openai:NAME`, `anthropic:NAME`,
    /// `scripted:FILE`).
    pub model: String,
    /// What the reviewer is told of the agent's environment: what is allowed and what never
    /// is, in prose (a string, or a list of strings).
    #[serde(default)]
    pub rules: AutoRules,
    /// How long one review may take (`90s`, `2m`, `500ms`); 90 s when absent.
    #[serde(default)]
    pub timeout: Option<String>,
}

impl AutoReviewConfig {
    /// The review's time limit, or what is wrong with `timeout`.
    pub fn timeout(&self) -> Result<Duration, String> {
        match &self.timeout {
            None => Ok(DEFAULT_AUTO_REVIEW_TIMEOUT),
            Some(text) => parse_timeout(text),
        }
    }
}

/// The shortest and longest time limit `review.auto.timeout` accepts.
const TIMEOUT_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(600));

/// Reads `90s`, `2m`, `500ms` (or a bare number of seconds) within [`TIMEOUT_BOUNDS`].
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let (number, unit) = match trimmed.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => trimmed.split_at(at),
        None => (trimmed, "s"),
    };
    let amount: u64 = number.parse().map_err(|_| {
        format!("`timeout: {text}` is not a duration; write a whole number and a unit, like `90s`, `2m` or `500ms`")
    })?;
    let duration = match unit.trim() {
        "ms" => Duration::from_millis(amount),
        "s" => Duration::from_secs(amount),
        "m" => Duration::from_secs(amount.saturating_mul(60)),
        other => {
            return Err(format!(
                "`timeout: {text}` has the unit `{other}`, which is not understood; write `ms`, `s` or `m` (`90s`)"
            ));
        }
    };
    let (least, most) = TIMEOUT_BOUNDS;
    if duration < least || duration > most {
        return Err(format!(
            "`timeout: {text}` is out of range; a review may take from 10ms to 10m"
        ));
    }
    Ok(duration)
}

/// The reviewer's rules as written: one string, or a list of strings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AutoRules(pub Vec<String>);

impl AutoRules {
    /// The rules as one text, one rule a line.
    pub fn text(&self) -> String {
        self.0.join("\n")
    }
}

impl<'de> Deserialize<'de> for AutoRules {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            One(String),
            Many(Vec<String>),
        }
        match Written::deserialize(deserializer) {
            Ok(Written::One(text)) => Ok(AutoRules(vec![text])),
            Ok(Written::Many(lines)) => Ok(AutoRules(lines)),
            Err(_) => Err(serde::de::Error::custom(
                "`review.auto.rules` should be a string or a list of strings",
            )),
        }
    }
}

/// Something wrong with a policy's use of the reviewer model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoProblem {
    /// The rule at fault (its position, from 1), or `None` for the `review` section itself.
    pub rule: Option<usize>,
    /// The key at fault under `review` (`default`, `auto.timeout`), or under the rule.
    pub key: &'static str,
    /// What is wrong and what is expected.
    pub message: String,
}

impl PolicyConfig {
    /// What is wrong with the policy's use of the reviewer model: an `auto` decision with no
    /// `review.auto`, a bad timeout. (The model's form is checked where models are known.)
    pub fn auto_problems(&self) -> Vec<AutoProblem> {
        let mut problems = Vec::new();
        if self.auto.is_none() {
            let missing = "needs a reviewer model: add `review.auto` with its `model:` (and `rules:`), or use `allow`, `ask` or `deny`";
            if self.default == Verdict::Auto {
                problems.push(AutoProblem {
                    rule: None,
                    key: "default",
                    message: format!("`default: auto` {missing}"),
                });
            }
            for (index, rule) in self.rules.iter().enumerate() {
                if rule.decision == Verdict::Auto {
                    problems.push(AutoProblem {
                        rule: Some(index + 1),
                        key: "decision",
                        message: format!(
                            "review rule {} (tool `{}`): `decision: auto` {missing}",
                            index + 1,
                            rule.tool
                        ),
                    });
                }
            }
        }
        if let Some(auto) = &self.auto {
            if let Err(problem) = auto.timeout() {
                problems.push(AutoProblem {
                    rule: None,
                    key: "auto.timeout",
                    message: format!("review.auto: {problem}"),
                });
            }
            if auto.model.trim().is_empty() {
                problems.push(AutoProblem {
                    rule: None,
                    key: "auto.model",
                    message: "review.auto: `model` is empty; name the reviewer's model as `model:` is named (`openai:NAME`, `anthropic:NAME` or `scripted:FILE`)".to_string(),
                });
            }
        }
        problems
    }
}

/// Why a policy could not be built.
#[derive(Debug, thiserror::Error)]
#[error(
    "review rule {index} (tool `{tool}`): the pattern for `{path}` is not a valid regular expression: {source}"
)]
pub struct PolicyError {
    /// The rule's position, from 1.
    pub index: usize,
    /// The rule's tool.
    pub tool: String,
    /// The argument path of the bad pattern.
    pub path: String,
    /// What the regex compiler said.
    #[source]
    pub source: regex::Error,
}

struct CompiledRule {
    tool: String,
    effect: Option<ToolEffect>,
    when: Vec<(Vec<String>, Regex)>,
    decision: Verdict,
    reason: Option<String>,
}

/// The rule-based reviewer: allow or deny by tool name and by patterns over argument values.
pub struct RulePolicy {
    default: Verdict,
    rules: Vec<CompiledRule>,
}

impl RulePolicy {
    /// Compiles a policy; a bad pattern is an error naming its rule.
    pub fn new(config: PolicyConfig) -> Result<Self, PolicyError> {
        let mut rules = Vec::with_capacity(config.rules.len());
        for (index, rule) in config.rules.into_iter().enumerate() {
            let mut when = Vec::with_capacity(rule.when.len());
            for (path, pattern) in rule.when {
                let regex = Regex::new(&pattern).map_err(|source| PolicyError {
                    index: index + 1,
                    tool: rule.tool.clone(),
                    path: path.clone(),
                    source,
                })?;
                when.push((path.split('.').map(str::to_string).collect(), regex));
            }
            rules.push(CompiledRule {
                tool: rule.tool,
                effect: rule.effect,
                when,
                decision: rule.decision,
                reason: rule.reason,
            });
        }
        Ok(RulePolicy {
            default: config.default,
            rules,
        })
    }

    /// The verdict for a call and the reason that goes with it (the matching rule's, or a
    /// default naming the tool).
    pub fn decide(&self, tool: &str, arguments: &Value) -> (Verdict, String) {
        self.decide_with_effect(tool, None, arguments)
    }

    /// [`RulePolicy::decide`] for a tool that declares `effect`: rules naming an effect match
    /// only a tool declaring that one.
    pub fn decide_with_effect(
        &self,
        tool: &str,
        effect: Option<ToolEffect>,
        arguments: &Value,
    ) -> (Verdict, String) {
        let matched = self.rules.iter().find(|rule| {
            tool_matches(&rule.tool, tool)
                && rule.effect.is_none_or(|wanted| effect == Some(wanted))
                && arguments_match(&rule.when, arguments)
        });
        match matched {
            Some(rule) => (
                rule.decision,
                rule.reason.clone().unwrap_or_else(|| match rule.decision {
                    Verdict::Ask => format!(
                        "the agent's review policy asks before `{tool}` calls like this one"
                    ),
                    Verdict::Auto => format!(
                        "the agent's review policy has its reviewer judge `{tool}` calls like this one"
                    ),
                    _ => format!("the agent's review policy denies `{tool}` calls like this one"),
                }),
            ),
            None => (
                self.default,
                match self.default {
                    Verdict::Ask => format!(
                        "the agent's review policy asks before any `{tool}` call no rule permits"
                    ),
                    Verdict::Auto => format!(
                        "the agent's review policy has its reviewer judge any `{tool}` call no rule permits"
                    ),
                    _ => format!(
                        "the agent's review policy allows no `{tool}` call that no rule permits"
                    ),
                },
            ),
        }
    }
}

/// A verdict and its reason as a decision.
fn verdict_decision(verdict: Verdict, reason: String) -> ReviewDecision {
    match verdict {
        Verdict::Allow => ReviewDecision::Allow,
        Verdict::Deny => ReviewDecision::Deny { reason },
        Verdict::Ask => ReviewDecision::Ask { reason },
        Verdict::Auto => ReviewDecision::Auto { reason },
    }
}

impl Reviewer for RulePolicy {
    fn review<'a>(&'a self, request: ReviewRequest<'a>) -> BoxFuture<'a, ReviewDecision> {
        let (verdict, reason) =
            self.decide_with_effect(request.tool, request.effect, request.arguments);
        Box::pin(std::future::ready(verdict_decision(verdict, reason)))
    }
}

fn tool_matches(pattern: &str, tool: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => tool.starts_with(prefix),
        None => pattern == tool,
    }
}

fn arguments_match(when: &[(Vec<String>, Regex)], arguments: &Value) -> bool {
    when.iter().all(|(path, regex)| {
        let mut values = vec![arguments];
        for key in path {
            values = values
                .into_iter()
                .flat_map(|value| step(value, key))
                .collect();
        }
        values.into_iter().any(|value| match value {
            Value::String(text) => regex.is_match(text),
            Value::Array(items) => items.iter().any(|item| match item {
                Value::String(text) => regex.is_match(text),
                other => regex.is_match(&other.to_string()),
            }),
            other => regex.is_match(&other.to_string()),
        })
    })
}

/// One step down an argument path: an object key, an array index, or every element.
fn step<'v>(value: &'v Value, key: &str) -> Vec<&'v Value> {
    match value {
        Value::Object(map) => map.get(key).into_iter().collect(),
        Value::Array(items) => match key.parse::<usize>() {
            Ok(index) => items.get(index).into_iter().collect(),
            Err(_) => items.iter().filter_map(|item| item.get(key)).collect(),
        },
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decision(policy: &RulePolicy, tool: &str, arguments: &Value) -> ReviewDecision {
        let (verdict, reason) = policy.decide(tool, arguments);
        verdict_decision(verdict, reason)
    }

    #[test]
    fn an_ask_verdict_carries_its_reason() {
        let policy = policy(json!({
            "rules": [{"tool": "bash", "when": {"command": "^git push"}, "decision": "ask", "reason": "pushing publishes work"}]
        }));
        assert_eq!(
            decision(&policy, "bash", &json!({"command": "git push"})),
            ReviewDecision::Ask {
                reason: "pushing publishes work".into()
            }
        );
        assert_eq!(decision(&policy, "read", &json!({})), ReviewDecision::Allow);
    }

    fn policy(yaml_like_json: Value) -> RulePolicy {
        RulePolicy::new(serde_json::from_value(yaml_like_json).unwrap()).unwrap()
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let policy = policy(json!({
            "rules": [
                {"tool": "bash", "when": {"command": "rm\\s+-rf"}, "decision": "deny", "reason": "no recursive deletes"},
                {"tool": "web_*", "decision": "deny"}
            ]
        }));
        assert_eq!(
            decision(&policy, "bash", &json!({"command": "rm -rf /"})),
            ReviewDecision::Deny {
                reason: "no recursive deletes".into()
            }
        );
        assert_eq!(
            decision(&policy, "bash", &json!({"command": "ls"})),
            ReviewDecision::Allow
        );
        assert!(matches!(
            decision(&policy, "web_fetch", &json!({})),
            ReviewDecision::Deny { .. }
        ));
    }

    #[test]
    fn paths_reach_into_nested_objects_and_arrays() {
        let policy = policy(json!({
            "rules": [{"tool": "*", "when": {"edits.path": "^secrets/"}, "decision": "deny"}]
        }));
        let touching = json!({"edits": [{"path": "src/a.rs"}, {"path": "secrets/key"}]});
        assert!(matches!(
            decision(&policy, "multi_edit", &touching),
            ReviewDecision::Deny { .. }
        ));
        assert_eq!(
            decision(&policy, "multi_edit", &json!({"edits": []})),
            ReviewDecision::Allow
        );
    }

    #[test]
    fn a_deny_by_default_policy_names_the_tool() {
        let policy =
            policy(json!({"default": "deny", "rules": [{"tool": "read", "decision": "allow"}]}));
        assert_eq!(decision(&policy, "read", &json!({})), ReviewDecision::Allow);
        let ReviewDecision::Deny { reason } = decision(&policy, "bash", &json!({})) else {
            panic!("expected a denial");
        };
        assert!(reason.contains("`bash`"));
    }

    #[test]
    fn a_rule_naming_an_effect_matches_only_tools_declaring_it() {
        let policy = policy(json!({
            "rules": [{"tool": "*", "effect": "destructive", "decision": "ask", "reason": "it may delete"}]
        }));
        let (verdict, reason) =
            policy.decide_with_effect("fs__delete", Some(ToolEffect::Destructive), &json!({}));
        assert_eq!((verdict, reason.as_str()), (Verdict::Ask, "it may delete"));
        let (verdict, _) =
            policy.decide_with_effect("fs__read", Some(ToolEffect::ReadOnly), &json!({}));
        assert_eq!(verdict, Verdict::Allow);
        assert_eq!(policy.decide("bash", &json!({})).0, Verdict::Allow);
        assert_eq!(
            ToolEffect::from_hints(None, None),
            ToolEffect::Destructive,
            "MCP's defaults: not read-only, destructive"
        );
        assert_eq!(
            ToolEffect::from_hints(Some(false), Some(false)),
            ToolEffect::Additive
        );
        assert_eq!(
            ToolEffect::from_hints(Some(true), Some(true)),
            ToolEffect::ReadOnly
        );
    }

    #[test]
    fn auto_needs_a_reviewer_and_a_timeout_it_understands() {
        let config: PolicyConfig = serde_json::from_value(json!({
            "default": "auto",
            "rules": [{"tool": "bash", "decision": "auto"}]
        }))
        .unwrap();
        let problems = config.auto_problems();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!((problems[1].rule, problems[1].key), (Some(1), "decision"));
        assert!(problems[1].message.contains("review.auto"), "{problems:?}");

        let config: PolicyConfig = serde_json::from_value(json!({
            "rules": [{"tool": "bash", "decision": "auto", "reason": "commands vary"}],
            "auto": {"model": "scripted:r.yaml", "rules": ["builds", "tests"], "timeout": "2h"}
        }))
        .unwrap();
        let problems = config.auto_problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "auto.timeout");
        assert!(problems[0].message.contains("`h`"), "{problems:?}");
        let auto = config.auto.as_ref().unwrap();
        assert_eq!(auto.rules.text(), "builds\ntests");
        let policy = RulePolicy::new(config).unwrap();
        assert_eq!(
            decision(&policy, "bash", &json!({"command": "ls"})),
            ReviewDecision::Auto {
                reason: "commands vary".into()
            }
        );
    }

    #[test]
    fn timeouts_read_with_their_unit() {
        assert_eq!(parse_timeout("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_timeout("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_timeout("30"), Ok(Duration::from_secs(30)));
        for bad in ["", "fast", "1ms", "11m", "-3s", "1.5s"] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
        let rules: AutoRules = serde_json::from_value(json!("one rule")).unwrap();
        assert_eq!(rules.0, vec!["one rule".to_string()]);
        assert!(serde_json::from_value::<AutoRules>(json!(3)).is_err());
    }

    #[test]
    fn a_bad_pattern_names_its_rule() {
        let err = RulePolicy::new(
            serde_json::from_value(json!({"rules": [
                {"tool": "read", "decision": "allow"},
                {"tool": "bash", "when": {"command": "(unclosed"}, "decision": "deny"}
            ]}))
            .unwrap(),
        )
        .err()
        .unwrap();
        assert_eq!(err.index, 2);
        assert!(err.to_string().contains("`command`"));
    }
}
