use cdpr::kinematics::Pose;
use cdpr::sim::*;
fn main() {
    let text = include_str!("../robots/uvigo8.toml").replace("damping = 50.0", "damping = 0.0");
    let robot = cdpr::robot::parse_robot(&text, "x").unwrap();
    for dt in [1e-3, 9e-4, 8e-4, 7e-4, 6e-4] {
        for (dx, dyaw) in [(0.003, 0.0), (0.0, 0.01)] {
            let config = SimConfig {
                dt,
                ..Default::default()
            };
            let target = Pose::new(0.02, -0.03, 0.15, 0.0, 0.0, 0.0);
            let mut s = Sim::at(&robot, config, &target).unwrap();
            let e_eq = s.energy().unwrap();
            let mut off = s.state().pose;
            off.position.x += dx;
            off.rpy.z += dyaw;
            s.place(&off).unwrap();
            let e0 = s.energy().unwrap();
            let n = (10.0 / dt) as usize;
            let mut worst: f64 = 0.0;
            let mut first = 0.0;
            let mut last = 0.0;
            for k in 0..n {
                s.step().unwrap();
                let e = s.energy().unwrap();
                worst = worst.max((e - e0).abs());
                if k < n / 10 {
                    first += e;
                }
                if k >= n - n / 10 {
                    last += e;
                }
            }
            println!(
                "dt {dt:e} dx {dx} dyaw {dyaw}: worst {:.3}%  drift(mean last10% - first10%) {:.4}%",
                worst / (e0 - e_eq) * 100.0,
                (last - first) / (n / 10) as f64 / (e0 - e_eq) * 100.0
            );
        }
    }
}
