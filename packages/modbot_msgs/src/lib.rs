#![doc = include_str!("../README.md")]

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A ROS 2 message type: the names DDS sees and the field list rosidl reports.
pub trait RosMessage: Serialize + DeserializeOwned + Clone + Default + std::fmt::Debug + Send + 'static {
    /// ROS package, e.g. `sensor_msgs`.
    const PACKAGE: &'static str;
    /// Type name, e.g. `JointState` (`Plan_Request` for a service part).
    const NAME: &'static str;
    /// `msg`, or `srv` for a service's request and response.
    const KIND: &'static str = "msg";
    /// Fields in wire order, with the type as rosidl's `get_fields_and_field_types` prints it.
    const FIELDS: &'static [(&'static str, &'static str)];
    /// The message definition as ROS 2 tools record it beside the messages (the `ros2msg`
    /// schema of rosbag2's MCAP files): its constants and fields, then every message type it
    /// uses after a line of `=` and `MSG: pkg/Name`, comments and defaults left out.
    const DEFINITION: &'static str;

    /// `pkg/msg/Name`, as `ros2 topic info` prints it.
    fn ros_type() -> String {
        format!("{}/{}/{}", Self::PACKAGE, Self::KIND, Self::NAME)
    }

    /// The DDS type name on the wire: `pkg::msg::dds_::Name_`.
    fn dds_type() -> String {
        format!("{}::{}::dds_::{}_", Self::PACKAGE, Self::KIND, Self::NAME)
    }

    /// Checks the `.msg` bounds (`string<=N`, `T[<=N]`) the Rust type cannot express.
    fn check_bounds(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Serde for fixed-size arrays `T[N]` of any length: CDR writes them as N elements with no
/// length prefix, which is serde's tuple form (serde itself implements arrays only to 32).
pub mod fixed_array {
    use serde::de::{Deserialize, Deserializer, Error, SeqAccess, Visitor};
    use serde::ser::{Serialize, SerializeTuple, Serializer};
    use std::marker::PhantomData;

    /// Serializes `[T; N]` as an N-tuple.
    pub fn serialize<S: Serializer, T: Serialize, const N: usize>(v: &[T; N], s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(N)?;
        for x in v {
            t.serialize_element(x)?;
        }
        t.end()
    }

    struct ArrayVisitor<T, const N: usize>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for ArrayVisitor<T, N> {
        type Value = [T; N];
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "an array of {N} elements")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; N], A::Error> {
            let mut v = Vec::with_capacity(N);
            for i in 0..N {
                v.push(seq.next_element()?.ok_or_else(|| A::Error::invalid_length(i, &self))?);
            }
            v.try_into().map_err(|_| A::Error::custom("array length"))
        }
    }

    /// Deserializes `[T; N]` from an N-tuple.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
        d: D,
    ) -> Result<[T; N], D::Error> {
        d.deserialize_tuple(N, ArrayVisitor::<T, N>(PhantomData))
    }
}

/// CDR (little endian, XCDR1) encoding with the 4-byte encapsulation header, as
/// `rclpy.serialization.serialize_message` produces and DDS carries.
pub mod cdr {
    use super::RosMessage;

    /// Encapsulation header of plain CDR, little endian.
    pub const CDR_LE: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
    /// Encapsulation header of plain CDR, big endian.
    pub const CDR_BE: [u8; 4] = [0x00, 0x00, 0x00, 0x00];

    /// Why bytes could not be decoded as a message.
    #[derive(Debug, thiserror::Error)]
    pub enum CdrError {
        /// Fewer than 4 bytes, or an encapsulation other than plain CDR.
        #[error("{ty}: not a CDR payload ({why})")]
        Encapsulation {
            /// ROS type expected.
            ty: String,
            /// What was wrong.
            why: String,
        },
        /// The body does not decode as the type.
        #[error("{ty}: malformed CDR body: {why}")]
        Body {
            /// ROS type expected.
            ty: String,
            /// Decoder message.
            why: String,
        },
        /// The message breaks a bound of its `.msg`.
        #[error("{ty}: {why}")]
        Bounds {
            /// ROS type.
            ty: String,
            /// Which bound.
            why: String,
        },
    }

    /// Encodes a message with the little-endian encapsulation header.
    pub fn to_bytes<M: RosMessage>(m: &M) -> Result<Vec<u8>, CdrError> {
        m.check_bounds()
            .map_err(|why| CdrError::Bounds { ty: M::ros_type(), why })?;
        let body = cdr_encoding::to_vec::<M, byteorder::LittleEndian>(m).map_err(|e| CdrError::Body {
            ty: M::ros_type(),
            why: e.to_string(),
        })?;
        let mut out = CDR_LE.to_vec();
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Decodes a message with its encapsulation header (either byte order).
    pub fn from_bytes<M: RosMessage>(b: &[u8]) -> Result<M, CdrError> {
        let enc = |why: &str| CdrError::Encapsulation {
            ty: M::ros_type(),
            why: why.to_string(),
        };
        if b.len() < 4 {
            return Err(enc("shorter than the 4-byte header"));
        }
        let body = &b[4..];
        let res = match b[..2] {
            [0x00, 0x01] => cdr_encoding::from_bytes::<M, byteorder::LittleEndian>(body),
            [0x00, 0x00] => cdr_encoding::from_bytes::<M, byteorder::BigEndian>(body),
            _ => return Err(enc(&format!("encapsulation {:02x}{:02x}", b[0], b[1]))),
        };
        let (m, _) = res.map_err(|e| CdrError::Body {
            ty: M::ros_type(),
            why: e.to_string(),
        })?;
        m.check_bounds()
            .map_err(|why| CdrError::Bounds { ty: M::ros_type(), why })?;
        Ok(m)
    }
}

#[allow(clippy::all, clippy::pedantic, unused_qualifications, non_camel_case_types)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/generated.rs"));
}
pub use generated::*;

impl builtin_interfaces::msg::Time {
    /// A time from seconds (floor to the nanosecond; negative times keep nanosec in 0..1e9).
    pub fn from_secs_f64(t: f64) -> Self {
        let sec = t.floor();
        let nanosec = ((t - sec) * 1e9).round().min(999_999_999.0) as u32;
        Self {
            sec: sec as i32,
            nanosec,
        }
    }

    /// Seconds as f64.
    pub fn as_secs_f64(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.nanosec) * 1e-9
    }
}
