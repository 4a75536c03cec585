//! `modbot calibrate skid-steer`: the wheeled vehicle's skid-steer model (α, x_ICR) measured
//! on the embedded simulator (spec seed-000 §3.3: a straight run and a spin).

use std::path::PathBuf;

use anyhow::Result;
use modbot_app::load::WHEELFOOT_WORLD_YAML;
use modbot_app::{WheeledPose, calibrate_skid_steer, load_world};

use crate::common::{BadInput, ConfigArgs, emit};

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// What to calibrate.
    #[arg(value_parser = ["skid-steer"])]
    pub what: String,
    /// World file (default: worlds/wheelfoot_mu1.yaml, terrain μ = 1.0 multiplied).
    #[arg(long)]
    pub world: Option<PathBuf>,
    /// The vehicle's pose: normal (Table 3.30) or low (§4.2).
    #[arg(long, default_value = "normal", value_parser = ["normal", "low"])]
    pub pose: String,
    /// Wheel joint speed, deg/s (at most the wheel's 360).
    #[arg(long, default_value_t = 180.0, value_parser = crate::common::positive)]
    pub speed_deg_s: f64,
    /// Seconds of each test run.
    #[arg(long, default_value_t = 3.0, value_parser = crate::common::positive)]
    pub seconds: f64,
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: &CalibrateArgs) -> Result<()> {
    if !(args.speed_deg_s.is_finite() && args.speed_deg_s > 0.0 && args.speed_deg_s <= 360.0) {
        return Err(BadInput(format!(
            "--speed-deg-s {}: expected a number in (0, 360]",
            args.speed_deg_s
        ))
        .into());
    }
    let catalog = args.config.catalog()?;
    let world = match &args.world {
        Some(p) => load_world(Some(p))?,
        None => modbot_core::Scenario::from_yaml(WHEELFOOT_WORLD_YAML, "worlds/wheelfoot_mu1.yaml")?,
    };
    let pose = if args.pose == "low" {
        WheeledPose::Low
    } else {
        WheeledPose::Normal
    };
    let c = calibrate_skid_steer(&catalog, &world, pose, args.speed_deg_s.to_radians(), args.seconds)?;
    emit(format!(
        "skid-steer calibration of `wheeled` ({} pose) in `{}`, wheels at {:.0} deg/s for {} s each\n\
         straight run   distance {:.4} m, mean rim travel {:.4} m\n\
         spin           turned {:+.2} deg, rim travel right − left {:+.4} m\n\
         alpha          {:.4}   (forward speed = alpha (V_l + V_r) / 2)\n\
         x_ICR          {:.4} m (yaw rate = alpha (V_r − V_l) / (2 x_ICR); wheel half-track {:.4} m)\n",
        args.pose,
        world.name,
        args.speed_deg_s,
        args.seconds,
        c.straight_distance_m,
        c.straight_wheel_travel_m,
        c.spin_angle_rad.to_degrees(),
        c.spin_travel_difference_m,
        c.alpha,
        c.x_icr_m,
        c.half_track_m,
    ))
}
