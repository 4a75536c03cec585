//! Dense linear algebra the engine needs: the inverse of a symmetric positive definite
//! matrix (the mass matrix), block by block for several trees.

/// Inverts a symmetric positive definite `n`×`n` matrix in place (column-major) through its
/// Cholesky factor: M⁻¹ = L⁻ᵀ L⁻¹. False if it is not positive definite. Written by hand
/// because nalgebra's generic `Cholesky::inverse` took a quarter of a step on 14×14
/// matrices (decision 0018).
pub(crate) fn spd_inverse(a: &mut [f64], n: usize) -> bool {
    // L (lower) over the lower triangle, column-major: a[i + j n] = L_ij.
    for j in 0..n {
        let mut d = a[j + j * n];
        for k in 0..j {
            d -= a[j + k * n] * a[j + k * n];
        }
        if !(d > 0.0 && d.is_finite()) {
            return false;
        }
        let d = d.sqrt();
        a[j + j * n] = d;
        for i in j + 1..n {
            let mut v = a[i + j * n];
            for k in 0..j {
                v -= a[i + k * n] * a[j + k * n];
            }
            a[i + j * n] = v / d;
        }
    }
    // L⁻¹ in place (lower triangle).
    for j in 0..n {
        a[j + j * n] = 1.0 / a[j + j * n];
        for i in j + 1..n {
            let mut v = 0.0;
            for k in j..i {
                v -= a[i + k * n] * a[k + j * n];
            }
            a[i + j * n] = v / a[i + i * n];
        }
    }
    // M⁻¹ = L⁻ᵀ L⁻¹: entry (i, j), i ≥ j, is Σ_{k ≥ i} L⁻¹_ki L⁻¹_kj.
    // Off-diagonal results go to the strict upper triangle, which is never read here; the
    // diagonal is written last.
    let mut diag = vec![0.0; n];
    for j in 0..n {
        for i in j..n {
            let mut v = 0.0;
            for k in i..n {
                v += a[k + i * n] * a[k + j * n];
            }
            if i == j {
                diag[j] = v;
            } else {
                a[j + i * n] = v;
            }
        }
    }
    for j in 0..n {
        a[j + j * n] = diag[j];
        for i in j + 1..n {
            a[i + j * n] = a[j + i * n];
        }
    }
    true
}

/// Inverts the block-diagonal SPD matrix `mass` (n×n, column-major, one block per range in
/// `blocks`) into `minv` (zero outside the blocks); `scratch` is a work buffer. False if a
/// block is not positive definite.
pub(crate) fn block_inverse(
    mass: &[f64],
    n: usize,
    blocks: &[std::ops::Range<usize>],
    minv: &mut [f64],
    scratch: &mut Vec<f64>,
) -> bool {
    if blocks.len() == 1 && blocks[0].len() == n {
        minv.copy_from_slice(mass);
        return spd_inverse(minv, n);
    }
    minv.fill(0.0);
    for block in blocks {
        let (o, m) = (block.start, block.len());
        scratch.clear();
        for j in 0..m {
            scratch.extend_from_slice(&mass[o + (o + j) * n..o + m + (o + j) * n]);
        }
        if !spd_inverse(scratch, m) {
            return false;
        }
        for j in 0..m {
            minv[o + (o + j) * n..o + m + (o + j) * n].copy_from_slice(&scratch[j * m..(j + 1) * m]);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn spd_inverse_inverts() {
        let n = 7;
        let b = DMatrix::from_fn(n, n, |i, j| {
            ((i * 7 + j * 3) % 5) as f64 - 2.0 + if i == j { 0.5 } else { 0.0 }
        });
        let m = &b * b.transpose() + DMatrix::identity(n, n);
        let mut a = m.as_slice().to_vec();
        assert!(spd_inverse(&mut a, n));
        let inv = DMatrix::from_column_slice(n, n, &a);
        let err = (&m * inv - DMatrix::<f64>::identity(n, n)).abs().max();
        assert!(err < 1e-10, "{err}");
        let mut not_spd = vec![1.0, 2.0, 2.0, 1.0];
        assert!(!spd_inverse(&mut not_spd, 2));
    }

    #[test]
    fn block_inverse_inverts_each_block() {
        let spd = |n: usize, seed: usize| {
            let b = DMatrix::from_fn(n, n, |i, j| ((i * 7 + j * 3 + seed) % 5) as f64 - 2.0);
            &b * b.transpose() + DMatrix::identity(n, n)
        };
        let (a, b) = (spd(4, 1), spd(3, 2));
        let mut m = DMatrix::zeros(7, 7);
        m.view_mut((0, 0), (4, 4)).copy_from(&a);
        m.view_mut((4, 4), (3, 3)).copy_from(&b);
        let mut inv = vec![0.0; 49];
        assert!(block_inverse(m.as_slice(), 7, &[0..4, 4..7], &mut inv, &mut Vec::new()));
        let inv = DMatrix::from_column_slice(7, 7, &inv);
        let err = (&m * inv - DMatrix::<f64>::identity(7, 7)).abs().max();
        assert!(err < 1e-10, "{err}");
    }
}
