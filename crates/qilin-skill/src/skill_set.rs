//! The skills one workspace can use, by name.

use crate::Skill;
use qilin_tool::closest_names;
use std::collections::BTreeMap;

/// Skills by name, iterated in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    skills: BTreeMap<String, Skill>,
}

impl SkillSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a skill; a skill already in the set under the same name is kept and the new one
    /// is handed back.
    pub fn insert(&mut self, skill: Skill) -> Result<(), Box<Skill>> {
        if self.skills.contains_key(&skill.name) {
            return Err(Box::new(skill));
        }
        self.skills.insert(skill.name.clone(), skill);
        Ok(())
    }

    /// The skill with this name.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name)
    }

    /// Every skill, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    /// Every name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.skills.keys().map(String::as_str)
    }

    /// How many skills there are.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills of this set named in `names` (names not in the set are skipped).
    pub fn only<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> SkillSet {
        let mut skills = BTreeMap::new();
        for name in names {
            if let Some(skill) = self.skills.get(name) {
                skills.insert(skill.name.clone(), skill.clone());
            }
        }
        SkillSet { skills }
    }

    /// Names close to `name`, for "did you mean".
    pub fn suggest(&self, name: &str) -> Vec<String> {
        closest_names(name, self.names(), 3)
            .into_iter()
            .map(str::to_string)
            .collect()
    }
}
