//! Grid A*: optimal against an independent Dijkstra, valid paths, the Moving AI files'
//! published optimal lengths, typed failures, malformed files.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic on bad fixtures

use std::path::PathBuf;

use modbot_planner::grid::*;
use proptest::prelude::*;

fn never() -> bool {
    false
}

/// Plain Dijkstra over the same move set, written independently of the planner.
fn dijkstra(map: &GridMap, s: (usize, usize), g: (usize, usize), conn: Connectivity) -> Option<f64> {
    let (w, h) = (map.width, map.height);
    let mut dist = vec![f64::INFINITY; w * h];
    let mut done = vec![false; w * h];
    dist[s.1 * w + s.0] = 0.0;
    loop {
        let mut best = None;
        for i in 0..w * h {
            if !done[i] && dist[i].is_finite() && best.is_none_or(|b: usize| dist[i] < dist[b]) {
                best = Some(i);
            }
        }
        let u = best?;
        if u == g.1 * w + g.0 {
            return Some(dist[u]);
        }
        done[u] = true;
        let (x, y) = ((u % w) as i64, (u / w) as i64);
        for dx in -1i64..=1 {
            for dy in -1i64..=1 {
                if (dx == 0 && dy == 0) || (conn == Connectivity::Four && dx != 0 && dy != 0) {
                    continue;
                }
                let (nx, ny) = (x + dx, y + dy);
                if !map.passable(nx, ny)
                    || (dx != 0 && dy != 0 && !(map.passable(x + dx, y) && map.passable(x, y + dy)))
                {
                    continue;
                }
                let v = ny as usize * w + nx as usize;
                let c = if dx != 0 && dy != 0 {
                    std::f64::consts::SQRT_2
                } else {
                    1.0
                };
                if dist[u] + c < dist[v] {
                    dist[v] = dist[u] + c;
                }
            }
        }
    }
}

fn random_map(w: usize, h: usize, seed: u64, density: f64) -> GridMap {
    let mut m = GridMap::new(w, h, 0.05);
    let mut x = seed | 1;
    for y in 0..h {
        for c in 0..w {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (x % 1000) as f64 / 1000.0 < density {
                m.set(c, y, Occupancy::Occupied);
            }
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn astar_is_optimal_and_valid(w in 2usize..20, h in 2usize..20, seed in any::<u64>(), density in 0.0f64..0.4,
                                  sx in 0usize..20, sy in 0usize..20, gx in 0usize..20, gy in 0usize..20, eight in any::<bool>()) {
        let mut map = random_map(w, h, seed, density);
        let (s, g) = ((sx % w, sy % h), (gx % w, gy % h));
        map.set(s.0, s.1, Occupancy::Free);
        map.set(g.0, g.1, Occupancy::Free);
        let conn = if eight { Connectivity::Eight } else { Connectivity::Four };
        let mut planner = AStar::new();
        let got = planner.plan(&map, s, g, conn, 0, &never);
        match (dijkstra(&map, s, g, conn), got) {
            (Some(d), Ok(p)) => {
                prop_assert!((d - p.cost).abs() < 1e-9, "{d} vs {}", p.cost);
                prop_assert_eq!(p.cells[0], s);
                prop_assert_eq!(*p.cells.last().unwrap(), g);
                let mut len = 0.0;
                for pair in p.cells.windows(2) {
                    let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
                    let (dx, dy) = (x1 as i64 - x0 as i64, y1 as i64 - y0 as i64);
                    prop_assert!(dx.abs() <= 1 && dy.abs() <= 1 && (dx, dy) != (0, 0));
                    prop_assert!(map.passable(x1 as i64, y1 as i64));
                    if dx != 0 && dy != 0 {
                        prop_assert!(eight);
                        prop_assert!(map.passable(x0 as i64 + dx, y0 as i64) && map.passable(x0 as i64, y0 as i64 + dy), "corner cut");
                        len += std::f64::consts::SQRT_2;
                    } else {
                        len += 1.0;
                    }
                }
                prop_assert!((len - p.cost).abs() < 1e-9);
            }
            (None, Err(PlanError::NoPath { .. })) => {}
            (d, p) => prop_assert!(false, "dijkstra {d:?}, astar {p:?}"),
        }
    }
}

/// The Moving AI scenario files shipped in ../shared/data/maps: every published optimal
/// length reproduced.
#[test]
fn movingai_optimal_lengths() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut checked = 0;
    for name in ["empty-16-16", "random-32-32-20"] {
        let map = GridMap::load_movingai(&dir.join(format!("{name}.map"))).unwrap();
        let scen = parse_scen(
            &std::fs::read_to_string(dir.join(format!("{name}.map.scen"))).unwrap(),
            name,
        )
        .unwrap();
        check_scen(&scen, &map, name).unwrap();
        let mut planner = AStar::new();
        for s in scen {
            let p = planner
                .plan(&map, s.start, s.goal, Connectivity::Eight, 0, &never)
                .unwrap();
            assert!(
                (p.cost - s.optimal).abs() < 1e-6,
                "{name}: {:?} → {:?}: {} vs {}",
                s.start,
                s.goal,
                p.cost,
                s.optimal
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 200);
}

#[test]
fn typed_failures_and_malformed_files() {
    let mut m = GridMap::new(4, 3, 1.0);
    m.set(1, 1, Occupancy::Occupied);
    let mut p = AStar::new();
    assert!(matches!(
        p.plan(&m, (1, 1), (0, 0), Connectivity::Eight, 0, &never),
        Err(PlanError::StartOccupied(1, 1))
    ));
    assert!(matches!(
        p.plan(&m, (0, 0), (1, 1), Connectivity::Eight, 0, &never),
        Err(PlanError::GoalOccupied(1, 1))
    ));
    assert!(matches!(
        p.plan(&m, (0, 0), (9, 0), Connectivity::Eight, 0, &never),
        Err(PlanError::OutOfBounds { x: 9, .. })
    ));
    for y in 0..3 {
        m.set(2, y, Occupancy::Occupied);
    }
    assert!(matches!(
        p.plan(&m, (0, 0), (3, 0), Connectivity::Eight, 0, &never),
        Err(PlanError::NoPath { .. })
    ));
    let big = GridMap::new(200, 200, 1.0);
    assert!(matches!(
        p.plan(&big, (0, 0), (199, 199), Connectivity::Four, 10, &never),
        Err(PlanError::Timeout { .. })
    ));
    let mut walled = big.clone();
    for y in 0..200 {
        walled.set(100, y, Occupancy::Occupied);
    }
    assert!(matches!(
        p.plan(&walled, (0, 0), (199, 199), Connectivity::Four, 0, &|| true),
        Err(PlanError::Cancelled { .. })
    ));
    for (text, needle) in [
        ("type octile\nheight 2\nwidth 2\nmap\n..\n.\n", ":6: row has 1"),
        ("type octile\nheight 2\nwidth 2\nmap\n..\n.x\n", "unknown terrain `x`"),
        ("type octile\nheight x\n", ":2: height `x`"),
        ("type octile\nheight 1\nwidth 1\n", "missing `map`"),
    ] {
        let e = GridMap::parse_movingai(text, "m.map").unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("m.map"), "{e}");
    }
    let e = parse_scen("version 1\n1\tm\t2\t2\t0\t0\t1\n", "s.scen")
        .unwrap_err()
        .to_string();
    assert!(e.contains("s.scen:2") && e.contains("7 fields"), "{e}");
}

/// Issue 18: header sizes whose product wraps are refused before anything is allocated, and
/// `.map`/`.scen` nonsense that used to be accepted is refused naming the line.
#[test]
fn movingai_files_refuse_what_they_cannot_mean() {
    let huge = format!("type octile\nheight {}\nwidth 3\nmap\n", usize::MAX / 2);
    for (text, needle) in [
        (huge.as_str(), "at most 100000000 cells"),
        ("type octile\nheight 0\nwidth 3\nmap\n", "size 3 × 0"),
        ("type hexagonal\nheight 1\nwidth 1\nmap\n.\n", ":1: type `hexagonal`"),
        ("height 1\nwidth 1\nmap\n.\n", "missing `type octile`"),
        (
            "type octile\nheight 1\nheight 2\nwidth 1\nmap\n.\n",
            ":3: height given twice",
        ),
        (
            "type octile extra\nheight 1\nwidth 1\nmap\n.\n",
            ":1: unexpected header",
        ),
    ] {
        let e = GridMap::parse_movingai(text, "m.map").unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains("m.map"), "{text:?}: {e}");
    }
    let line = "0\tm.map\t2\t2\t0\t0\t1\t1\t1.41421356";
    for (text, needle) in [
        (format!("version 2\n{line}\n"), "s.scen:1: version `2`"),
        (format!("{line}\n"), "s.scen:1: expected a first line `version 1`"),
        (
            "version 1\n0\tm.map\t2\t2\t0\t0\t1\t1\tnan\n".to_string(),
            "s.scen:2: optimal length `nan`",
        ),
    ] {
        let e = parse_scen(&text, "s.scen").unwrap_err().to_string();
        assert!(e.contains(needle), "{text:?}: {e}");
    }
    let map = GridMap::parse_movingai("type octile\nheight 2\nwidth 3\nmap\n...\n...\n", "m.map").unwrap();
    let scen = parse_scen(&format!("version 1\n{line}\n"), "s.scen").unwrap();
    let e = check_scen(&scen, &map, "s.scen").unwrap_err().to_string();
    assert!(
        e.contains("s.scen:2") && e.contains("2 × 2 map; the map is 3 × 2"),
        "{e}"
    );
    let scen = parse_scen("version 1\n0\tm.map\t3\t2\t0\t0\t5\t1\t5\n", "s.scen").unwrap();
    let e = check_scen(&scen, &map, "s.scen").unwrap_err().to_string();
    assert!(e.contains("goal (5, 1) is outside"), "{e}");
    let data = [0i8; 4];
    assert!(GridMap::from_occupancy(usize::MAX, 2, 0.05, [0.0, 0.0], &data, 65).is_err());
}

#[test]
fn occupancy_grid_round_trip_and_inflation() {
    let data: Vec<i8> = vec![0, 100, -1, 70, 10, 0];
    let m = GridMap::from_occupancy(3, 2, 0.05, [1.0, 2.0], &data, 65).unwrap();
    assert_eq!(m.get(1, 0), Occupancy::Occupied);
    assert_eq!(m.get(2, 0), Occupancy::Unknown);
    assert_eq!(m.get(0, 1), Occupancy::Occupied);
    assert_eq!(m.get(1, 1), Occupancy::Free);
    assert_eq!(m.to_occupancy(), vec![0, 100, -1, 100, 0, 0]);
    assert!(GridMap::from_occupancy(3, 3, 0.05, [0.0, 0.0], &data, 65).is_err());
    let mut g = GridMap::new(9, 9, 0.1);
    g.set(4, 4, Occupancy::Occupied);
    let i = g.inflated(0.2);
    assert_eq!(i.get(4, 2), Occupancy::Occupied);
    assert_eq!(i.get(6, 4), Occupancy::Occupied);
    assert_eq!(i.get(6, 6), Occupancy::Free, "the corner is 0.28 m away");
    assert_eq!(i.get(4, 1), Occupancy::Free);
}

/// World ↔ cell on an occupancy grid's origin and resolution: every point maps to the cell
/// whose square holds it, the centre maps back into the same cell, and points off the map
/// (or malformed grids) are refused with typed errors.
#[test]
fn world_points_map_to_the_cell_that_holds_them() {
    use modbot_planner::grid::{GridMap, PlanError};
    let m = GridMap::from_occupancy(4, 3, 0.25, [-1.0, 2.0], &[0; 12], 65).expect("grid");
    assert_eq!(m.cell_at([-1.0, 2.0]), Ok((0, 0)));
    assert_eq!(m.cell_at([-0.01, 2.74]), Ok((3, 2)));
    for x in 0..4 {
        for y in 0..3 {
            let c = m.cell_center((x, y));
            assert_eq!(m.cell_at(c), Ok((x, y)));
        }
    }
    for p in [[0.0, 2.0], [-1.01, 2.0], [-0.5, 2.75], [f64::NAN, 2.0]] {
        assert!(
            matches!(
                m.cell_at(p),
                Err(PlanError::OutOfBounds {
                    width: 4,
                    height: 3,
                    ..
                })
            ),
            "{p:?}"
        );
    }
    for (res, origin) in [(0.0, [0.0, 0.0]), (f64::NAN, [0.0, 0.0]), (0.1, [f64::INFINITY, 0.0])] {
        assert!(matches!(
            GridMap::from_occupancy(4, 3, res, origin, &[0; 12], 65),
            Err(PlanError::Malformed { .. })
        ));
    }
}
