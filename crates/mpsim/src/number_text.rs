//! How a number given in a scenario is written back in a message about it.
//!
//! Rust's `{}` writes an `f64` in full decimal: a capacity of `-1e300` came back as a minus sign
//! and 301 digits. Here a number keeps `{}`'s shortest round-trip digits (and drops no `.0` it
//! would not) between 1e-4 and 1e16 in magnitude, and takes the exponent form of `{:e}` outside
//! them (`1e300`, `-1.5e-7`), at the thresholds Python's `repr` uses, so that the Python
//! mirror of these messages (`mptcplab.scenario.model._num`) writes the same text.

use std::fmt;

/// An `f64` as a message shows it.
#[derive(Clone, Copy, Debug)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        let magnitude = v.abs();
        if !v.is_finite() || v == 0.0 || (1e-4..1e16).contains(&magnitude) {
            write!(f, "{v}")
        } else {
            write!(f, "{v:e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Num;

    #[test]
    fn plain_numbers_keep_their_shortest_decimal_form() {
        for (v, text) in [
            (8.0, "8"),
            (0.5, "0.5"),
            (-2.25, "-2.25"),
            (0.0001, "0.0001"),
            (1e15, "1000000000000000"),
            (0.0, "0"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(Num(v).to_string(), text, "{v:?}");
        }
    }

    #[test]
    fn very_large_and_very_small_numbers_take_the_exponent_form() {
        for (v, text) in [
            (-1e300, "-1e300"),
            (1e16, "1e16"),
            (1.5e-7, "1.5e-7"),
            (-1e-300, "-1e-300"),
            (9.99e-5, "9.99e-5"),
            (f64::MAX, "1.7976931348623157e308"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(Num(v).to_string(), text, "{v:?}");
        }
    }
}
