//! The sensor and connector models of the embedded binding (decision record 0058): what
//! each of a module's devices reports, with the errors a real one has.

use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{Result, SimError};

fn bad(key: &str, v: f64, expected: &str) -> SimError {
    SimError::Settings {
        key: key.into(),
        value: v.to_string(),
        expected: expected.into(),
    }
}

fn positive(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(bad(key, v, "a positive finite number"))
    }
}

fn at_least_zero(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(bad(key, v, "a finite number >= 0"))
    }
}

/// The IMU: a MEMS unit with an orientation filter on the module's foot plate. Its roll and
/// pitch are held by gravity (white error); its yaw, the compass, wanders as a random walk
/// (the gyro's bias integrated between magnetometer corrections) plus white error.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ImuModel {
    /// Output rate, Hz.
    pub rate_hz: f64,
    /// Roll and pitch error, σ, deg.
    pub tilt_sigma_deg: f64,
    /// Yaw white error, σ, deg.
    pub yaw_sigma_deg: f64,
    /// Yaw random walk, deg/√s: after T seconds its σ is this × √T.
    pub yaw_walk_deg_per_sqrt_s: f64,
    /// Gyro white noise, σ per reading, deg/s.
    pub gyro_sigma_deg_s: f64,
    /// Gyro bias, σ of each axis's constant offset (drawn once per unit), deg/s.
    pub gyro_bias_sigma_deg_s: f64,
    /// Accelerometer white noise, σ per reading, m/s².
    pub accel_sigma_m_s2: f64,
}

impl Default for ImuModel {
    /// 100 Hz; tilt 0.1°, yaw 0.2° white and 0.05°/√s walk (1.2° after 10 min), gyro 0.1°/s
    /// white and 0.2°/s bias, accelerometer 0.05 m/s² (record 0058).
    fn default() -> ImuModel {
        ImuModel {
            rate_hz: 100.0,
            tilt_sigma_deg: 0.1,
            yaw_sigma_deg: 0.2,
            yaw_walk_deg_per_sqrt_s: 0.05,
            gyro_sigma_deg_s: 0.1,
            gyro_bias_sigma_deg_s: 0.2,
            accel_sigma_m_s2: 0.05,
        }
    }
}

impl ImuModel {
    /// No error at all (tests of the kinematics).
    pub const EXACT: ImuModel = ImuModel {
        rate_hz: 100.0,
        tilt_sigma_deg: 0.0,
        yaw_sigma_deg: 0.0,
        yaw_walk_deg_per_sqrt_s: 0.0,
        gyro_sigma_deg_s: 0.0,
        gyro_bias_sigma_deg_s: 0.0,
        accel_sigma_m_s2: 0.0,
    };

    fn validate(&self) -> Result<()> {
        positive("imu.rate_hz", self.rate_hz)?;
        for (k, v) in [
            ("imu.tilt_sigma_deg", self.tilt_sigma_deg),
            ("imu.yaw_sigma_deg", self.yaw_sigma_deg),
            ("imu.yaw_walk_deg_per_sqrt_s", self.yaw_walk_deg_per_sqrt_s),
            ("imu.gyro_sigma_deg_s", self.gyro_sigma_deg_s),
            ("imu.gyro_bias_sigma_deg_s", self.gyro_bias_sigma_deg_s),
            ("imu.accel_sigma_m_s2", self.accel_sigma_m_s2),
        ] {
            at_least_zero(k, v)?;
        }
        Ok(())
    }
}

/// When the mast camera's frames are taken and arrive.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CameraTiming {
    /// Frames per second.
    pub rate_hz: f64,
    /// From capture to delivery, s (exposure, detection, transport).
    pub latency_s: f64,
}

impl Default for CameraTiming {
    /// 15 frames/s, each delivered one frame (67 ms) after it was taken.
    fn default() -> CameraTiming {
        CameraTiming {
            rate_hz: 15.0,
            latency_s: 1.0 / 15.0,
        }
    }
}

/// The docking sensor on each port: a small camera in the port face reading the tag on the
/// partner's port face (record 0058). It sees a face within its range and its cone, turned
/// towards it, with nothing between; it reports the nearest such face's pose.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DockingModel {
    /// Readings per second.
    pub rate_hz: f64,
    /// From capture to delivery, s.
    pub latency_s: f64,
    /// Farthest face seen, m (between the face origins).
    pub range_m: f64,
    /// Half-angle of its cone about the port's axis, deg.
    pub half_fov_deg: f64,
    /// The partner's face is read only when turned towards the sensor within this, deg.
    pub max_incidence_deg: f64,
    /// Position error, σ per axis, m.
    pub sigma_m: f64,
    /// Orientation error, σ about each axis, deg.
    pub sigma_deg: f64,
}

impl Default for DockingModel {
    /// 30 Hz, one frame late; 0.4 m range (the staging points are 0.1–0.3 m out, record 0050);
    /// an 80° half cone (a wide-angle lens: at 2 cm a face 3 cm to the side is still in
    /// view); faces turned up to 60°; σ 2 mm and 0.5°.
    fn default() -> DockingModel {
        DockingModel {
            rate_hz: 30.0,
            latency_s: 1.0 / 30.0,
            range_m: 0.4,
            half_fov_deg: 80.0,
            max_incidence_deg: 60.0,
            sigma_m: 0.002,
            sigma_deg: 0.5,
        }
    }
}

/// A connector's latch: engaged, it closes on a partner face that comes within its capture
/// range before `engage_s` has passed, else it reports failed.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatchModel {
    /// Largest distance between the face origins it catches, m.
    pub capture_m: f64,
    /// Largest misalignment of the axes (and of the roll off a keyed quarter turn), deg.
    pub capture_deg: f64,
    /// How long an engage looks for a partner, s.
    pub engage_s: f64,
}

impl Default for LatchModel {
    /// 3 cm and 8°, what the guide cones catch (record 0048); 0.2 s to close.
    fn default() -> LatchModel {
        LatchModel {
            capture_m: 0.03,
            capture_deg: 8.0,
            engage_s: 0.2,
        }
    }
}

/// Every model of a module's devices, and the wheel sensor's filter.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct SensorModels {
    /// The IMU.
    pub imu: ImuModel,
    /// The mast camera's timing (its geometry and noise are its [`crate::CameraSpec`]).
    pub camera: CameraTiming,
    /// The ports' docking sensors.
    pub docking: DockingModel,
    /// The connectors.
    pub latch: LatchModel,
    /// The wheel force sensor's averaging window, s: V-Rep's 50 ms step, over which its
    /// sensor reported a constraint's impulse (record 0046).
    pub force_window_s: f64,
}

impl SensorModels {
    /// The defaults of each model and a 50 ms force window.
    pub fn standard() -> SensorModels {
        SensorModels {
            force_window_s: 0.05,
            ..SensorModels::default()
        }
    }

    /// Every number finite and in range; refused naming the key.
    pub fn validate(&self) -> Result<()> {
        self.imu.validate()?;
        positive("camera.rate_hz", self.camera.rate_hz)?;
        let d = &self.docking;
        positive("docking.rate_hz", d.rate_hz)?;
        // Bounded so that the frames in flight (rate × latency) and the force window's
        // samples stay few.
        for (k, v, max) in [
            ("camera.latency_s", self.camera.latency_s, 1.0),
            ("docking.latency_s", d.latency_s, 1.0),
            ("force_window_s", self.force_window_s, 1.0),
            ("camera.rate_hz", self.camera.rate_hz, 1000.0),
            ("docking.rate_hz", d.rate_hz, 1000.0),
            ("imu.rate_hz", self.imu.rate_hz, 1000.0),
        ] {
            if !(v.is_finite() && v >= 0.0 && v <= max) {
                return Err(bad(k, v, &format!("a number from 0 to {max}")));
            }
        }
        positive("docking.range_m", d.range_m)?;
        for (k, v) in [
            ("docking.half_fov_deg", d.half_fov_deg),
            ("docking.max_incidence_deg", d.max_incidence_deg),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 90.0) {
                return Err(bad(k, v, "an angle in (0, 90] deg"));
            }
        }
        at_least_zero("docking.sigma_m", d.sigma_m)?;
        at_least_zero("docking.sigma_deg", d.sigma_deg)?;
        positive("latch.capture_m", self.latch.capture_m)?;
        positive("latch.capture_deg", self.latch.capture_deg)?;
        positive("latch.engage_s", self.latch.engage_s)?;
        positive("force_window_s", self.force_window_s)?;
        if self.latch.engage_s > 10.0 {
            return Err(bad("latch.engage_s", self.latch.engage_s, "at most 10 s"));
        }
        Ok(())
    }
}

/// A standard normal sample.
pub(crate) fn normal(rng: &mut impl Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// A rotation by independent small angles of σ `sigma_rad` about each axis.
pub(crate) fn small_rotation(rng: &mut impl Rng, sigma_rad: f64) -> UnitQuaternion<f64> {
    if sigma_rad == 0.0 {
        return UnitQuaternion::identity();
    }
    let v = Vector3::new(normal(rng), normal(rng), normal(rng)) * sigma_rad;
    UnitQuaternion::from_scaled_axis(v)
}

/// A pose disturbed by σ `sigma_m` per axis and `sigma_rad` about each axis.
pub(crate) fn disturbed(pose: &Isometry3<f64>, rng: &mut impl Rng, sigma_m: f64, sigma_rad: f64) -> Isometry3<f64> {
    let dt = Vector3::new(normal(rng), normal(rng), normal(rng)) * sigma_m;
    Isometry3::from_parts(
        Translation3::from(pose.translation.vector + dt),
        small_rotation(rng, sigma_rad) * pose.rotation,
    )
}

/// A camera's detection as the interface reports it: its position with the covariance of
/// the camera's noise.
pub fn tag_detection(d: crate::Detection, noise: crate::CameraNoise) -> modbot_interface::TagDetection {
    modbot_interface::TagDetection {
        covariance: point_covariance(&d.position, noise.range_sigma_m, noise.bearing_sigma_deg.to_radians()),
        id: d.id,
        position: d.position,
    }
}

/// The covariance of a point measured as range r (σ_r) and two angles (σ_b each, rad): the
/// spherical errors carried to x, y, z by the Jacobian of the conversion.
pub fn point_covariance(p: &Vector3<f64>, sigma_range_m: f64, sigma_bearing_rad: f64) -> Matrix3<f64> {
    let r = p.norm();
    if r < 1e-9 {
        return Matrix3::identity() * sigma_range_m.powi(2);
    }
    let rho = p.xy().norm();
    let (az, el) = (p.y.atan2(p.x), p.z.atan2(rho));
    let (ca, sa, ce, se) = (az.cos(), az.sin(), el.cos(), el.sin());
    // Columns: ∂p/∂r, ∂p/∂az, ∂p/∂el.
    let j = Matrix3::new(
        ce * ca,
        -r * ce * sa,
        -r * se * ca,
        ce * sa,
        r * ce * ca,
        -r * se * sa,
        se,
        0.0,
        r * ce,
    );
    let s = Matrix3::from_diagonal(&Vector3::new(
        sigma_range_m.powi(2),
        sigma_bearing_rad.powi(2),
        sigma_bearing_rad.powi(2),
    ));
    j * s * j.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_checked_naming_the_key() {
        assert!(SensorModels::standard().validate().is_ok());
        let mut m = SensorModels::standard();
        m.imu.yaw_walk_deg_per_sqrt_s = f64::NAN;
        assert!(
            m.validate()
                .unwrap_err()
                .to_string()
                .contains("imu.yaw_walk_deg_per_sqrt_s")
        );
        let mut m = SensorModels::standard();
        m.docking.half_fov_deg = 120.0;
        assert!(m.validate().unwrap_err().to_string().contains("docking.half_fov_deg"));
        let mut m = SensorModels::standard();
        m.camera.rate_hz = 0.0;
        assert!(m.validate().unwrap_err().to_string().contains("camera.rate_hz"));
        let mut m = SensorModels::standard();
        m.camera.latency_s = 1e9;
        assert!(m.validate().unwrap_err().to_string().contains("camera.latency_s"));
        let mut m = SensorModels::standard();
        m.force_window_s = 50.0;
        assert!(m.validate().unwrap_err().to_string().contains("force_window_s"));
    }

    /// The covariance of a point straight ahead is σ_r² along x and (r σ_b)² across; of a
    /// point 90° to the left, σ_r² along y.
    #[test]
    fn point_covariance_is_the_spherical_errors_carried_over() {
        let c = point_covariance(&Vector3::new(2.0, 0.0, 0.0), 0.01, 0.005);
        assert!((c[(0, 0)] - 1e-4).abs() < 1e-15);
        assert!((c[(1, 1)] - (2.0f64 * 0.005).powi(2)).abs() < 1e-15);
        assert!((c[(2, 2)] - (2.0f64 * 0.005).powi(2)).abs() < 1e-15);
        assert!(c[(0, 1)].abs() < 1e-15);
        let c = point_covariance(&Vector3::new(0.0, 1.0, 0.0), 0.01, 0.005);
        assert!((c[(1, 1)] - 1e-4).abs() < 1e-12 && (c[(0, 0)] - 0.005f64.powi(2)).abs() < 1e-12);
    }

    /// Anywhere (here 35° up, 120° round): the covariance is J S Jᵀ with J the conversion's
    /// Jacobian taken by central differences, not by the formula under test.
    #[test]
    fn point_covariance_matches_a_numerical_jacobian() {
        let (r, az, el) = (1.3f64, 120f64.to_radians(), 35f64.to_radians());
        let at =
            |r: f64, az: f64, el: f64| Vector3::new(r * el.cos() * az.cos(), r * el.cos() * az.sin(), r * el.sin());
        let h = 1e-6;
        let cols = [
            (at(r + h, az, el) - at(r - h, az, el)) / (2.0 * h),
            (at(r, az + h, el) - at(r, az - h, el)) / (2.0 * h),
            (at(r, az, el + h) - at(r, az, el - h)) / (2.0 * h),
        ];
        let j = Matrix3::from_columns(&cols);
        let (sr, sb) = (0.01, 0.004);
        let s = Matrix3::from_diagonal(&Vector3::new(sr * sr, sb * sb, sb * sb));
        let expect = j * s * j.transpose();
        let got = point_covariance(&at(r, az, el), sr, sb);
        assert!((got - expect).norm() < 1e-9, "{got}\n{expect}");
    }
}
