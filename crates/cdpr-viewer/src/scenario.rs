//! What the viewer plays: a run request ([`RunRequest`], the same options `cdpr simulate`
//! takes, with the same defaults) with a robot and a trajectory, turned into a [`Player`]
//! exactly as `cdpr simulate` builds its run, so that the two give the same states step for
//! step.

use super::ViewerError;
use cdpr_core::robot::Robot;
use cdpr_core::run::{Player, Prepared, RunRequest};
use std::path::Path;

/// One run the viewer can play: a request whose robot and trajectory are set.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    request: RunRequest,
}

impl Scenario {
    /// `request` as a scenario: without a robot, uvigo8; without a trajectory, the robot's
    /// own (the one its paper used).
    pub fn new(mut request: RunRequest) -> Scenario {
        let robot = request
            .robot
            .get_or_insert_with(|| "uvigo8".to_string())
            .clone();
        request
            .trajectory
            .get_or_insert_with(|| default_trajectory(&robot).to_string());
        Scenario { request }
    }

    /// The robot's own trajectory (the one its paper used) at `cdpr simulate`'s defaults.
    pub fn for_robot(robot: &str) -> Scenario {
        Scenario::new(RunRequest {
            robot: Some(robot.to_string()),
            ..RunRequest::default()
        })
    }

    /// A robot file, or the name of a shipped robot (as `cdpr --robot` takes it).
    pub fn robot(&self) -> &str {
        self.request.robot.as_deref().unwrap_or_default()
    }

    /// A built-in trajectory name or a CSV file (as `cdpr simulate --trajectory` takes it).
    pub fn trajectory(&self) -> &str {
        self.request.trajectory.as_deref().unwrap_or_default()
    }

    /// Every option of the run.
    pub fn request(&self) -> &RunRequest {
        &self.request
    }

    /// This scenario with `edit` applied to its request (robot and trajectory stay set).
    pub fn with(&self, edit: impl FnOnce(&mut RunRequest)) -> Scenario {
        let mut request = self.request.clone();
        edit(&mut request);
        Scenario::new(request)
    }

    /// Another robot, on its own trajectory.
    pub fn with_robot(&self, robot: &str) -> Scenario {
        self.with(|r| {
            r.robot = Some(robot.to_string());
            r.trajectory = Some(default_trajectory(robot).to_string());
        })
    }

    pub fn load_robot(&self) -> Result<Robot, ViewerError> {
        Ok(self.request.load_robot()?)
    }

    /// Loads robot and trajectory and puts the platform at rest at the trajectory's start.
    pub fn build(&self) -> Result<Player, ViewerError> {
        let Prepared {
            robot,
            trajectory,
            options,
            ..
        } = self.request.prepare()?;
        Ok(Player::new(&robot, trajectory, &options)?)
    }
}

/// The trajectory each shipped robot's paper used (its variants', too); seed 000's test for
/// any other robot.
pub fn default_trajectory(robot: &str) -> &'static str {
    let stem = Path::new(robot)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(robot);
    // A variant of a shipped robot (`caroca-pulleys`, `silva4-obstacle`) plays its paper's.
    match stem.split('-').next().unwrap_or(stem) {
        "silva4" => "pickplace",
        "caroca" => "poly5",
        "rssu2" => "tilt",
        _ => "seed000",
    }
}

/// One entry of the demo: a scenario and how many times its trajectory plays.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoEntry {
    pub scenario: Scenario,
    pub loops: u32,
}

/// The hands-off demo: uvigo8 on seed 000's test first, then every other robot the picker
/// offers (`robots`, see [`robot_choices`]), each on its own paper's trajectory, round and
/// round. Speeds are the papers' faster ones so that a visitor sees motion within seconds;
/// seed 000's test still takes ~17 s a loop. The robots with legs (keops, rssu2) play too,
/// drawn leg by leg; a file that does not load is left out with a warning.
pub fn demo_playlist(robots: &[String]) -> Vec<DemoEntry> {
    let mut names: Vec<&String> = robots.iter().collect();
    if let Some(i) = names.iter().position(|n| n.as_str() == "uvigo8") {
        let first = names.remove(i);
        names.insert(0, first);
    }
    names
        .into_iter()
        .filter_map(|robot| {
            let (speed, loops) = match default_trajectory(robot) {
                "pickplace" => (0.5, 4),
                "poly5" => (0.5, 2),
                "tilt" => (0.5, 1),
                _ => (0.2, 2),
            };
            let scenario = Scenario::for_robot(robot).with(|r| r.speed = speed);
            match scenario.load_robot() {
                Ok(_) => Some(DemoEntry { scenario, loops }),
                Err(e) => {
                    tracing::warn!("demo: leaving out `{robot}`: {e}");
                    None
                }
            }
        })
        .collect()
}

/// Robots the picker offers: the shipped ones, then every `*.toml` in `robots/` (relative to
/// the working directory) that is not one of them, sorted. A missing directory is no error.
pub fn robot_choices(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = Robot::builtin_names().map(str::to_string).collect();
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            !names.iter().any(|n| n == stem)
        })
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    names.extend(files);
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped robots, in the picker's order: the papers' five, then the built variants.
    const SHIPPED: [&str; 9] = [
        "uvigo8",
        "silva4",
        "caroca",
        "keops",
        "rssu2",
        "uvigo8-pulleys",
        "caroca-pulleys",
        "silva4-obstacle",
        "uvigo8-drives",
    ];

    #[test]
    fn shipped_robots_come_first_and_extra_files_are_listed() {
        let dir = std::env::temp_dir().join(format!("cdpr-robots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("uvigo8.toml"), "").expect("write");
        std::fs::write(dir.join("mine.toml"), "").expect("write");
        std::fs::write(dir.join("notes.txt"), "").expect("write");
        let choices = robot_choices(&dir);
        assert_eq!(&choices[..SHIPPED.len()], &SHIPPED);
        assert_eq!(choices.len(), SHIPPED.len() + 1, "{choices:?}");
        assert!(choices[SHIPPED.len()].ends_with("mine.toml"));
        assert_eq!(robot_choices(&dir.join("missing")).len(), SHIPPED.len());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_demo_entry_builds() {
        let playlist = demo_playlist(&robot_choices(Path::new("robots")));
        let robots: Vec<&str> = playlist.iter().map(|e| e.scenario.robot()).collect();
        assert_eq!(robots, SHIPPED);
        let trajectories: Vec<&str> = playlist.iter().map(|e| e.scenario.trajectory()).collect();
        assert_eq!(
            trajectories,
            [
                "seed000",
                "pickplace",
                "poly5",
                "seed000",
                "tilt",
                "seed000",
                "poly5",
                "pickplace",
                "seed000"
            ]
        );
        for entry in playlist {
            let driver = entry.scenario.build().expect("builds");
            assert!(driver.trajectory().duration() > 1.0);
        }
    }

    #[test]
    fn the_demo_leaves_out_files_that_do_not_load() {
        let dir = std::env::temp_dir().join(format!("cdpr-demo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        // Not a robot file the loader knows: the demo skips it.
        std::fs::write(
            dir.join("walker.toml"),
            "name = \"walker\"\n[legs]\ncount = 4\n",
        )
        .expect("write");
        let choices = robot_choices(&dir);
        assert_eq!(choices.len(), SHIPPED.len() + 1, "{choices:?}");
        let playlist = demo_playlist(&choices);
        let robots: Vec<&str> = playlist.iter().map(|e| e.scenario.robot()).collect();
        assert_eq!(robots, SHIPPED);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bad_names_are_reported_with_the_name() {
        let bad = Scenario::for_robot("uvigo8").with(|r| r.trajectory = Some("nosuch".into()));
        let message = bad.build().err().expect("fails").to_string();
        assert!(message.contains("nosuch"), "{message}");
        let bad = Scenario::for_robot("nosuchrobot");
        let message = bad.build().err().expect("fails").to_string();
        assert!(message.contains("nosuchrobot"), "{message}");
    }
}
