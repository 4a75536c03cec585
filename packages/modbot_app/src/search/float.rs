//! JSON has no NaN or infinity (serde_json writes them as `null` and cannot read them
//! back); the checkpoint keeps them as the strings "nan", "inf" and "-inf".

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Repr {
    Number(f64),
    Text(String),
}

fn to_repr(v: f64) -> Repr {
    if v.is_finite() {
        Repr::Number(v)
    } else if v.is_nan() {
        Repr::Text("nan".into())
    } else if v > 0.0 {
        Repr::Text("inf".into())
    } else {
        Repr::Text("-inf".into())
    }
}

fn from_repr<E: serde::de::Error>(r: Repr) -> Result<f64, E> {
    match r {
        Repr::Number(v) => Ok(v),
        Repr::Text(t) => match t.as_str() {
            "nan" => Ok(f64::NAN),
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            other => Err(E::custom(format!("`{other}` is not a number, nan, inf or -inf"))),
        },
    }
}

/// One f64.
pub mod one {
    use super::*;

    /// Serialises, non-finite values as strings.
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        to_repr(*v).serialize(s)
    }

    /// Reads a number or "nan", "inf", "-inf".
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        from_repr(Repr::deserialize(d)?)
    }
}

/// A list of f64.
pub mod many {
    use super::*;

    /// Serialises, non-finite values as strings.
    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        v.iter().map(|x| to_repr(*x)).collect::<Vec<_>>().serialize(s)
    }

    /// Reads numbers or "nan", "inf", "-inf".
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        Vec::<Repr>::deserialize(d)?.into_iter().map(from_repr).collect()
    }
}
