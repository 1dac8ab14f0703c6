//! Probe: cost and static accuracy of the chain model vs solver iterations and link mass.
use cdpr::kinematics::Pose;
use cdpr::robot::Robot;
use cdpr::sim::*;
fn main() {
    let robot = Robot::builtin("uvigo8").unwrap().unwrap();
    let arg = |k: usize, d: f64| {
        std::env::args()
            .nth(k)
            .map(|s| s.parse().unwrap())
            .unwrap_or(d)
    };
    let (it, steps, mass) = (arg(1, 4.0) as usize, arg(2, 3000.0) as usize, arg(3, 0.05));
    let mut config = SimConfig {
        model: ModelKind::Chain,
        ..Default::default()
    };
    config.chain.solver_iterations = it;
    config.chain.link_mass = mass;
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
        "it={it} m={mass} {:.1} us/step z={:.7} (exact 0.0490666) f0={:.4}/{:.4}",
        el.as_secs_f64() / steps as f64 * 1e6,
        sim.state().pose.position.z,
        sim.state().tensions[0],
        sim.state().tensions_constraint[0]
    );
}
