"""Browser test of the replay page (packages/modbot_app/web) that `modbot run` writes.

The page is assembled here the way the Rust side assembles it: the template's placeholder
lines are replaced verbatim by three.js (two files of the pinned npm package), the viewer
and the JSON data (with "<" escaped). Headless Chromium opens it from a file:// URL and the
checks read the scene back through the page's `window.modbotReplay` hooks.

Needs: selenium (test/python/requirements.txt), /usr/bin/chromium and /usr/bin/chromedriver
(Debian packages), and either MODBOT_THREE_JS (path of three/build/three.module.js, with
three.core.js beside it) or npm plus the registry, to `npm ci` the pinned three.js.

`check_replay(path, data)` is the reusable part: it runs every check on any replay page,
synthetic or real.
"""

import json
import math
import os
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "packages" / "modbot_app" / "web"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SHOT_FOR_HUMANS = Path("/tmp/replay-shot.png")

# Placeholder lines of replay.html, each replaced as a whole line.
PLACEHOLDERS = ("/*@THREE_CORE@*/", "/*@THREE_MODULE@*/", "/*@VIEWER@*/", "/*@DATA@*/")

CHROME_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # WebGL without a GPU: ANGLE on SwiftShader, which newer Chromium only allows when told.
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--window-size=1200,800",
)

POS_TOL = 1e-6
QUAT_TOL = 1e-6


# ----------------------------------------------------------------- page assembly --


def install_three(dest: Path) -> Path:
    """`npm ci` the committed pin into dest, as the Rust build script does; returns three.module.js."""
    for name in ("package.json", "package-lock.json"):
        shutil.copy(WEB / name, dest / name)
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=dest,
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    return dest / "node_modules" / "three" / "build" / "three.module.js"


def build_page(out: Path, data, three_module: Path) -> Path:
    """Writes the replay page for data (a JSON-able object, or a str sent as is) to out."""
    sources = {
        "/*@THREE_CORE@*/": three_module.with_name("three.core.js").read_text(encoding="utf-8"),
        "/*@THREE_MODULE@*/": three_module.read_text(encoding="utf-8"),
        "/*@VIEWER@*/": (WEB / "viewer.js").read_text(encoding="utf-8"),
    }
    for name, text in sources.items():
        # Inside <script>, "</script" would end the element and "<!--" can stop the next
        # "</script>" from ending it; the Rust side refuses such input too.
        low = text.lower()
        assert "</script" not in low and "<!--" not in low, f"{name} would break out of its <script>"
    blob = data if isinstance(data, str) else json.dumps(data)
    # "<" only occurs inside JSON strings, where \u003c means the same: this keeps both
    # "</script" and "<!--" out of the element ("</" -> "<\\/" alone misses "<!--").
    sources["/*@DATA@*/"] = blob.replace("<", "\\u003c")

    lines = (WEB / "replay.html").read_text(encoding="utf-8").split("\n")
    seen = [line.strip() for line in lines if line.strip() in sources]
    assert sorted(seen) == sorted(PLACEHOLDERS), f"template placeholders: {seen}"
    out.write_text("\n".join(sources.get(line.strip(), line) for line in lines), encoding="utf-8")
    return out


def read_page_data(html: Path) -> dict:
    """The JSON blob of a replay page, for checking a page someone else wrote."""
    text = html.read_text(encoding="utf-8")
    start_tag = '<script type="application/json" id="replay-data">'
    start = text.index(start_tag) + len(start_tag)
    return json.loads(text[start : text.index("</script>", start)])


# ---------------------------------------------------------------------- browser --


def new_driver(profile_dir: Path) -> webdriver.Chrome:
    assert Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists(), (
        "needs Debian's chromium and chromium-driver packages"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in CHROME_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={profile_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: selenium-manager never tries to download one.
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def open_page(driver, html: Path, timeout: float) -> dict:
    """Loads the page and waits until it is built or has given up; returns its state."""
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(html.resolve().as_uri())
    WebDriverWait(driver, timeout).until(
        lambda d: d.execute_script(
            "var r = window.modbotReplay; return !!r && (r.ready || r.errors.length > 0);"
        )
    )
    return driver.execute_script(
        "var r = window.modbotReplay;"
        "return {ready: r.ready, errors: r.errors, frameCount: r.frameCount, frame: r.frame,"
        " playing: r.playing, webgl: r.webgl};"
    )


def severe_logs(driver) -> list:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def js_state(driver, expr: str):
    return driver.execute_script("return window.modbotReplay." + expr + ";")


def scene_poses(driver, n_links: int) -> list:
    return driver.execute_script(
        "var r = window.modbotReplay, out = [];"
        "for (var i = 0; i < arguments[0]; i++) out.push(r.linkWorldPose(i));"
        "return out;",
        n_links,
    )


def assert_frame_shown(driver, data: dict, k: int) -> None:
    """The scene's link objects and CoM marker sit where frame k of the data puts them."""
    n = len(data["links"])
    got = scene_poses(driver, n)
    frame = data["frames"][k]
    for i, pose in enumerate(got):
        want = frame[7 * i : 7 * i + 7]
        for a in range(3):
            assert abs(pose[a] - want[a]) <= POS_TOL, f"frame {k} link {i} position {pose} vs {want}"
        # The viewer normalises quaternions; q and -q are the same rotation.
        norm = math.sqrt(sum(c * c for c in want[3:]))
        q = [c / norm for c in want[3:]]
        err = min(
            max(abs(pose[3 + a] - q[a]) for a in range(4)),
            max(abs(pose[3 + a] + q[a]) for a in range(4)),
        )
        assert err <= QUAT_TOL, f"frame {k} link {i} quaternion {pose[3:]} vs {q}"
    marker = driver.execute_script("return window.modbotReplay.comMarker();")
    for a in range(3):
        assert abs(marker[a] - data["com"][k][a]) <= POS_TOL, f"frame {k} CoM marker {marker}"


# ----------------------------------------------------------- screenshot reading --


def png_pixels(png: bytes):
    """(width, height, channels, rows) of an 8-bit RGB or RGBA PNG, as Chromium writes them."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    width = height = channels = None
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        body = png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, "unexpected PNG layout"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        # The five PNG row filters, undone in place.
        if kind == 1:
            for x in range(channels, stride):
                line[x] = (line[x] + line[x - channels]) & 0xFF
        elif kind == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 0xFF
        elif kind == 3:
            for x in range(stride):
                left = line[x - channels] if x >= channels else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 0xFF
        elif kind == 4:
            for x in range(stride):
                a = line[x - channels] if x >= channels else 0
                b = prev[x]
                c = prev[x - channels] if x >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pred) & 0xFF
        rows.append(line)
        prev = line
    return width, height, channels, rows


def centre_colours(png: bytes) -> tuple:
    """Distinct colours and luminance spread in the middle of the window, where only the
    3D view is (the title and the controls sit at the edges)."""
    width, height, channels, rows = png_pixels(png)
    colours, lum = set(), []
    for y in range(height // 4, 3 * height // 4, 2):
        row = rows[y]
        for x in range(width // 4, 3 * width // 4, 2):
            r, g, b = row[x * channels : x * channels + 3]
            colours.add((r, g, b))
            lum.append(0.299 * r + 0.587 * g + 0.114 * b)
    mean = sum(lum) / len(lum)
    spread = math.sqrt(sum((v - mean) ** 2 for v in lum) / len(lum))
    return len(colours), spread


# ------------------------------------------------------------------ the checks --


def check_replay(html, data=None, driver=None, screenshot=None, timeout=120.0) -> Path:
    """Opens a replay page and checks that it shows and plays data; returns a screenshot.

    html: the page; data: its data blob (read from the page when None); driver: a
    Chrome driver to reuse (a private one is started and stopped when None);
    screenshot: where to save the PNG (a new temporary file when None).
    """
    html = Path(html)
    if data is None:
        data = read_page_data(html)
    if driver is None:
        with tempfile.TemporaryDirectory(prefix="replay-chrome-") as profile:
            own = new_driver(Path(profile))
            try:
                return check_replay(html, data, own, screenshot, timeout)
            finally:
                own.quit()

    n_frames = len(data["t"])
    state = open_page(driver, html, timeout)
    assert state["errors"] == [], f"page reported errors: {state['errors']}"
    assert state["ready"] is True
    assert state["frameCount"] == n_frames
    assert state["frame"] == 0
    assert state["playing"] is False

    # A live WebGL 2 context on the page's canvas (getContext returns the existing one).
    assert driver.execute_script(
        "var c = document.querySelector('#view canvas');"
        "var gl = c && c.getContext('webgl2');"
        "return !!gl && !gl.isContextLost();"
    ), "no WebGL 2 canvas"

    # The scene shows frame 0, then the last frame.
    assert_frame_shown(driver, data, 0)
    last = n_frames - 1
    driver.execute_script("window.modbotReplay.setFrame(arguments[0]);", last)
    assert js_state(driver, "frame") == last
    assert_frame_shown(driver, data, last)

    # The slider, as a person moves it: it sets the frame and pauses.
    mid = n_frames // 2
    driver.execute_script(
        "var s = document.getElementById('time'); s.value = String(arguments[0]);"
        "s.dispatchEvent(new Event('input', {bubbles: true}));",
        mid,
    )
    assert js_state(driver, "frame") == mid
    assert js_state(driver, "playing") is False
    assert_frame_shown(driver, data, mid)
    assert driver.find_element(By.ID, "clock").text.startswith(f"t = {data['t'][mid]:.2f} s / ")

    # Playing advances the frame in real time.
    if n_frames > 1 and data["t"][-1] > data["t"][mid]:
        # Started and read in one call: on a loaded machine a WebDriver round trip under
        # software WebGL can outlast the second of data left, and the replay stops at its end.
        started = driver.execute_script("window.modbotReplay.play(); return window.modbotReplay.playing;")
        assert started is True
        # Real time moves it on at the next animation frame; a loaded machine may take a while.
        try:
            WebDriverWait(driver, 10).until(lambda d: js_state(d, "frame") > mid)
        except TimeoutException:
            pass  # reported just below, with the frame it stayed at
        advanced = js_state(driver, "frame")
        driver.execute_script("window.modbotReplay.pause();")
        assert advanced > mid, f"frame {advanced} after up to 10 s of playing from {mid}"
        assert js_state(driver, "playing") is False

    # Back to the start for the picture: the whole path ahead, the robot at its start.
    driver.execute_script("window.modbotReplay.setFrame(0);")
    time.sleep(0.3)  # a couple of animation frames for the render to land
    png = driver.get_screenshot_as_png()
    if screenshot is None:
        fd, name = tempfile.mkstemp(prefix="replay-", suffix=".png")
        os.close(fd)
        screenshot = name
    screenshot = Path(screenshot)
    screenshot.write_bytes(png)
    # Loose bounds: a long run seen whole is mostly ground, but a canvas that WebGL
    # never drew on is one flat colour.
    colours, spread = centre_colours(png)
    assert colours >= 8 and spread >= 1.0, (
        f"3D view looks flat ({colours} colours, luminance spread {spread:.1f}): {screenshot}"
    )

    errors = js_state(driver, "errors")
    assert errors == [], f"page reported errors: {errors}"
    severe = severe_logs(driver)
    assert severe == [], f"browser console errors: {severe}"
    return screenshot


# ---------------------------------------------------------------- synthetic run --


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]


def axis_quat(axis, angle):
    s = math.sin(angle / 2)
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2)]


def synthetic_data(n_frames: int = 200, rate_hz: float = 100.0) -> dict:
    """A 3-link chain crawling round a circle past a box obstacle, with every visual shape."""
    radius, spacing, height = 0.6, 0.16, 0.03
    identity = [0.0, 0.0, 0.0, 1.0]
    along_x = axis_quat((0, 1, 0), math.pi / 2)  # turns the link-local z axis onto x
    links = []
    for i in range(3):
        visuals = [
            {"shape": "box", "size": [0.1, 0.06, 0.05], "pose": [0.0, 0.0, 0.0] + identity},
            {"shape": "cylinder", "radius": 0.02, "length": 0.08, "pose": [0.0, 0.0, 0.035] + along_x},
            {"shape": "sphere", "radius": 0.015, "pose": [0.05, 0.0, 0.0] + identity},
            {"shape": "capsule", "radius": 0.01, "length": 0.04, "pose": [0.0, 0.0, -0.03] + identity},
        ]
        if i == 1:
            # Unsupported shapes are skipped and counted, not errors.
            visuals.append({"shape": "mesh", "filename": "x.stl", "pose": [0.0] * 6 + [1.0]})
        links.append({"name": f"m{i}_body", "robot": 0, "module": i, "visuals": visuals})

    t, frames, com = [], [], []
    for k in range(n_frames):
        time_s = k / rate_hz
        heading = 0.8 * time_s  # rad along the circle
        frame, centre = [], [0.0, 0.0, 0.0]
        for i in range(3):
            angle = heading - i * spacing / radius
            pos = [radius * math.cos(angle), radius * math.sin(angle), height + 0.01 * math.sin(6 * time_s + i)]
            q = quat_mul(axis_quat((0, 0, 1), angle + math.pi / 2), axis_quat((1, 0, 0), 0.2 * math.sin(4 * time_s - i)))
            frame += pos + q
            centre = [c + p / 3 for c, p in zip(centre, pos)]
        t.append(time_s)
        frames.append(frame)
        com.append(centre)
    return {
        "format": 1,
        "title": "synthetic_3 · circle · test_yard",
        "robot": "synthetic_3",
        "controller": "circle",
        "world": "test_yard",
        "rate_hz": rate_hz,
        "links": links,
        "ground": {"size": [4.0, 4.0]},
        "boxes": [
            {"name": "block_1", "kind": "ground_obstacle", "center": [0.9, 0.5, 0.04], "yaw": 0.3, "size": [0.2, 0.15, 0.08]},
            {"name": "wall_1", "kind": "wall", "center": [0.0, 1.4, 0.2], "yaw": 0.0, "size": [3.0, 0.05, 0.4]},
            {"name": "lath_1", "kind": "lath", "center": [-0.9, -0.3, 0.01], "yaw": 1.2, "size": [0.5, 0.03, 0.02]},
            # Markup in a name must not end or unbalance the data element.
            {"name": "odd<!--<script></script>name", "kind": "bump", "center": [0.2, -0.9, 0.02], "yaw": 0.0, "size": [0.3, 0.3, 0.04]},
        ],
        "t": t,
        "frames": frames,
        "com": com,
    }


# --------------------------------------------------------------------- fixtures --


@pytest.fixture(scope="session")
def three_module(tmp_path_factory) -> Path:
    """three/build/three.module.js of the pinned package (three.core.js beside it)."""
    given = os.environ.get("MODBOT_THREE_JS")
    if given:
        path = Path(given)
        assert path.is_file() and path.with_name("three.core.js").is_file(), (
            f"MODBOT_THREE_JS={given}: expected three.module.js with three.core.js beside it"
        )
        return path
    return install_three(tmp_path_factory.mktemp("three"))


@pytest.fixture(scope="session")
def driver(tmp_path_factory):
    d = new_driver(tmp_path_factory.mktemp("chrome-profile"))
    yield d
    d.quit()


# ------------------------------------------------------------------------ tests --


def test_synthetic_replay(tmp_path, three_module, driver):
    data = synthetic_data()
    page = build_page(tmp_path / "replay.html", data, three_module)
    shot = check_replay(page, data, driver, screenshot=tmp_path / "replay.png")
    shutil.copy(shot, SHOT_FOR_HUMANS)

    webgl = js_state(driver, "webgl")
    print(f"WebGL renderer: {webgl}")
    assert "SwiftShader" in webgl, f"expected software WebGL, got {webgl!r}"

    # The header names the run and counts the skipped visual.
    assert driver.find_element(By.ID, "title").text == data["title"]
    info = driver.find_element(By.ID, "info").text
    assert "3 links" in info and "200 frames" in info and "1 visual of unsupported shape" in info


def test_keyboard_and_mouse(tmp_path, three_module, driver):
    # 10 s of data: software WebGL makes each WebDriver call slow while playing, and the
    # play/pause checks must not run into the end of the replay.
    data = synthetic_data(n_frames=1000)
    page = build_page(tmp_path / "replay.html", data, three_module)
    state = open_page(driver, page, 60)
    assert state["ready"] and state["errors"] == []
    body = driver.find_element(By.TAG_NAME, "body")

    body.send_keys(Keys.ARROW_RIGHT)
    body.send_keys(Keys.ARROW_RIGHT)
    assert js_state(driver, "frame") == 2
    assert_frame_shown(driver, data, 2)
    body.send_keys(Keys.ARROW_LEFT)
    assert js_state(driver, "frame") == 1
    body.send_keys(Keys.SPACE)
    assert js_state(driver, "playing") is True
    body.send_keys(Keys.SPACE)
    assert js_state(driver, "playing") is False

    # Playing to the end stops there; play again restarts from the start.
    driver.execute_script("window.modbotReplay.setFrame(arguments[0]); window.modbotReplay.play();", 995)
    WebDriverWait(driver, 5).until(lambda d: not js_state(d, "playing"))
    assert js_state(driver, "frame") == 999
    # In one script: a separate call would see the replay already under way.
    restarted = driver.execute_script(
        "var r = window.modbotReplay; r.play(); var s = [r.frame, r.playing]; r.pause(); return s;"
    )
    assert restarted == [0, True]

    # Orbit, pan, zoom and re-centre: the camera moves and nothing breaks.
    canvas = driver.find_element(By.CSS_SELECTOR, "#view canvas")
    before = driver.get_screenshot_as_png()
    ActionChains(driver).move_to_element(canvas).click_and_hold().move_by_offset(80, 30).release().perform()
    ActionChains(driver).key_down(Keys.SHIFT).move_to_element(canvas).click_and_hold().move_by_offset(-40, 20).release().key_up(Keys.SHIFT).perform()
    ActionChains(driver).move_to_element(canvas).scroll_by_amount(0, 300).perform()
    ActionChains(driver).move_to_element(canvas).double_click().perform()
    time.sleep(0.2)
    assert driver.get_screenshot_as_png() != before, "the view did not change"
    assert js_state(driver, "errors") == []
    assert severe_logs(driver) == []


def _broken(change):
    data = synthetic_data(n_frames=20)
    return change(data)


def _frame_too_short(d):
    d["frames"][7] = d["frames"][7][:-1]
    return d


def _no_com(d):
    del d["com"]
    return d


def _null_number(d):
    d["frames"][3][2] = None  # what serde_json writes for NaN
    return d


def _infinite_time(d):
    d["t"][5] = "INF"
    return json.dumps(d).replace('"INF"', "1e999")  # parses to Infinity


def _bad_visual(d):
    d["links"][0]["visuals"][0]["pose"] = [0.0, 0.0, 0.0]
    return d


def _time_backwards(d):
    d["t"][10] = d["t"][2]
    return d


@pytest.mark.parametrize(
    "change, words",
    [
        (_frame_too_short, "frames[7]"),
        (_no_com, '"com"'),
        (_null_number, "frames[3][2]"),
        (_infinite_time, "t[5]"),
        (_bad_visual, "links[0].visuals[0].pose"),
        (_time_backwards, "t[10]"),
        (lambda d: '{"format": 1, "links": [', "not valid JSON"),
        (lambda d: [1, 2, 3], "not a JSON object"),
    ],
    ids=["short-frame", "no-com", "null", "infinity", "bad-visual", "time-backwards", "not-json", "not-object"],
)
def test_malformed_data_is_reported(tmp_path, three_module, driver, change, words):
    page = build_page(tmp_path / "replay.html", _broken(change), three_module)
    state = open_page(driver, page, 60)
    assert state["ready"] is False
    assert any(words in e for e in state["errors"]), state["errors"]
    box = driver.find_element(By.ID, "errors")
    assert box.is_displayed() and words in box.text
    # Reported, not thrown: an uncaught exception would be a SEVERE console entry.
    assert severe_logs(driver) == []


# ------------------------------------------------------------ a real modbot run --


def test_a_run_leaves_a_replay_of_its_links(tmp_path, driver):
    """`modbot run` on the obstacle course writes replay.html and links.csv: the page shows
    every link at the poses links.csv has for them, and the world's obstacles."""
    import csv

    modbot = os.environ.get("MODBOT_BIN", "modbot")
    out = tmp_path / "run"
    done = subprocess.run(
        [modbot, "run", "-q", "--out", str(out), "--warmup", "0", "--cycles", "2",
         "--world", str(REPO / "worlds" / "obstacle_course.yaml")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "replay.html" in done.stdout, done.stdout
    html = out / "replay.html"
    data = read_page_data(html)
    with open(out / "links.csv", newline="") as f:
        rows = list(csv.reader(f))
    names = [h[: -len("_x_m")] for h in rows[0][1::7]]
    poses = [[float(x) for x in r] for r in rows[1:]]
    assert [link["name"] for link in data["links"]] == names
    # Every control tick (a 4 s run at 100 Hz is far below the page's frame cap).
    assert len(data["t"]) == len(poses)
    for k in (0, len(poses) - 1):
        assert abs(data["t"][k] - poses[k][0]) < 1e-5
        for i in range(len(names)):
            page = data["frames"][k][7 * i: 7 * i + 3]
            csv_xyz = poses[k][1 + 7 * i: 4 + 7 * i]
            assert all(abs(a - b) <= 1e-5 for a, b in zip(page, csv_xyz)), (names[i], k)
    assert {b["kind"] for b in data["boxes"]} >= {"wall"}
    assert all(link["visuals"] for link in data["links"] if link["name"] != "base_link")
    check_replay(html, data, driver, screenshot=tmp_path / "run.png")
    shutil.copy(tmp_path / "run.png", Path("/tmp/replay-run-shot.png"))
    # The corridor's walls do not hide the robot, nor force a view straight down.
    driver.execute_script("window.modbotReplay.setFrame(0);")
    view = driver.execute_script("return window.modbotReplay.view();")
    assert view["elevation"] < 1.35, f"the camera looks straight down: {view}"

