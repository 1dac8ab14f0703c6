use cdpr::kinematics::Pose;
use cdpr::robot::Robot;
use cdpr::sim::*;
fn main() {
    let robot = Robot::builtin("uvigo8").unwrap().unwrap();
    let it: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(4);
    let steps: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(3000);
    let mut config = SimConfig {
        model: ModelKind::Chain,
        ..Default::default()
    };
    config.chain.solver_iterations = it;
    let pose = Pose::new(0.0, 0.0, 0.05, 0.0, 0.0, 0.0);
    let mut sim = Sim::at(&robot, config, &pose).unwrap();
    let rest = cdpr::kinematics::lengths(&robot, &pose);
    sim.set_command(&Command::Lengths(rest)).unwrap();
    let t0 = std::time::Instant::now();
    for _ in 0..steps {
        sim.step().unwrap();
    }
    let el = t0.elapsed();
    println!(
        "it={it} {:.1} us/step z={:.7}",
        el.as_secs_f64() / steps as f64 * 1e6,
        sim.state().pose.position.z
    );
}
