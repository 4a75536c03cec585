// Replay viewer of replay.html: builds a three.js scene from the run's data
// blob and plays it back. Classic script (no ES module syntax); three.js comes
// either as a global THREE or as the promise window.modbotThree.
//
// World is Z-up (ROS). Test hooks live on window.modbotReplay; the browser
// test reads the scene back through them, so they read three.js objects, not
// the data.
(function () {
  'use strict';

  // ---------------------------------------------------------------- hooks --

  var api = {
    ready: false,
    errors: [],
    frameCount: 0,
    frame: 0,
    playing: false,
    webgl: '',
    setFrame: function () {},
    linkWorldPose: function () { return null; },
    comMarker: function () { return null; },
    play: function () {},
    pause: function () {}
  };
  window.modbotReplay = api;

  var MAX_LISTED_ERRORS = 20;

  // Errors are collected, shown on the page and kept in api.errors; never
  // thrown, so a bad blob cannot leave a half-built page behind silently.
  function reportError(message) {
    var text = String(message);
    api.errors.push(text);
    if (window.console && console.warn) console.warn('modbot replay: ' + text);
    var box = document.getElementById('errors');
    var list = document.getElementById('error-list');
    if (!box || !list) return;
    box.hidden = false;
    if (list.children.length < MAX_LISTED_ERRORS) {
      var item = document.createElement('li');
      item.textContent = text;
      list.appendChild(item);
    } else if (list.children.length === MAX_LISTED_ERRORS) {
      var more = document.createElement('li');
      more.textContent = '… (see modbotReplay.errors for the rest)';
      list.appendChild(more);
    }
  }

  // Anything that escapes later (event handlers, animation) still ends up
  // visible instead of only in the console.
  window.addEventListener('error', function (event) {
    reportError('unexpected error: ' + (event.message || event.error));
  });
  window.addEventListener('unhandledrejection', function (event) {
    var reason = event.reason;
    reportError('unexpected error: ' + (reason && reason.message ? reason.message : reason));
  });

  // ----------------------------------------------------------- validation --

  function isNum(v) { return typeof v === 'number' && isFinite(v); }

  function isNumArray(a, n) {
    if (!Array.isArray(a) || a.length !== n) return false;
    for (var i = 0; i < n; i++) if (!isNum(a[i])) return false;
    return true;
  }

  function isPositive(v) { return isNum(v) && v > 0; }

  var SHAPES = { box: true, cylinder: true, sphere: true, capsule: true };

  // Checks everything the scene and the playback rely on. Returns a list of
  // messages (empty when usable) and counts visuals of unsupported shapes.
  function validate(data) {
    var errs = [];
    var stats = { skippedVisuals: 0 };
    // Per-array checks stop at the first few bad entries: one broken frame
    // in 60 000 should give a readable message, not 60 000 of them.
    function limited(limit) {
      var n = 0;
      return function (msg) {
        n += 1;
        if (n <= limit) errs.push(msg);
        else if (n === limit + 1) errs.push('… further errors of this kind omitted');
      };
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      errs.push('replay data is not a JSON object');
      return { errors: errs, stats: stats };
    }
    if (data.format !== 1) errs.push('unsupported replay format ' + JSON.stringify(data.format) + ' (expected 1)');
    var required = ['links', 'ground', 'boxes', 't', 'frames', 'com'];
    for (var r = 0; r < required.length; r++) {
      if (!(required[r] in data)) errs.push('replay data has no "' + required[r] + '"');
    }
    if (errs.length) return { errors: errs, stats: stats };

    // Links and their visuals.
    var nLinks = 0;
    if (!Array.isArray(data.links)) {
      errs.push('"links" is not an array');
    } else {
      nLinks = data.links.length;
      var badVisual = limited(10);
      for (var i = 0; i < nLinks; i++) {
        var link = data.links[i];
        var where = 'links[' + i + ']';
        if (link === null || typeof link !== 'object' || !Array.isArray(link.visuals)) {
          errs.push(where + ' has no "visuals" array');
          continue;
        }
        for (var v = 0; v < link.visuals.length; v++) {
          var vis = link.visuals[v];
          var vw = where + '.visuals[' + v + ']';
          if (vis === null || typeof vis !== 'object') { badVisual(vw + ' is not an object'); continue; }
          if (!SHAPES[vis.shape]) { stats.skippedVisuals += 1; continue; }
          if (!isNumArray(vis.pose, 7)) badVisual(vw + '.pose is not 7 finite numbers');
          if (vis.shape === 'box') {
            if (!isNumArray(vis.size, 3) || !(vis.size[0] >= 0 && vis.size[1] >= 0 && vis.size[2] >= 0)) {
              badVisual(vw + ' (box) needs "size": 3 finite numbers ≥ 0');
            }
          } else {
            if (!isPositive(vis.radius)) badVisual(vw + ' (' + vis.shape + ') needs a finite "radius" > 0');
            if ((vis.shape === 'cylinder' || vis.shape === 'capsule') && !(isNum(vis.length) && vis.length >= 0)) {
              badVisual(vw + ' (' + vis.shape + ') needs a finite "length" ≥ 0');
            }
          }
        }
      }
    }

    // Ground and obstacles.
    if (!data.ground || !isNumArray(data.ground.size, 2) || !(data.ground.size[0] > 0 && data.ground.size[1] > 0)) {
      errs.push('"ground.size" is not 2 finite numbers > 0');
    }
    if (!Array.isArray(data.boxes)) {
      errs.push('"boxes" is not an array');
    } else {
      var badBox = limited(10);
      for (var b = 0; b < data.boxes.length; b++) {
        var box = data.boxes[b];
        var bw = 'boxes[' + b + ']';
        if (box === null || typeof box !== 'object') { badBox(bw + ' is not an object'); continue; }
        if (!isNumArray(box.center, 3)) badBox(bw + '.center is not 3 finite numbers');
        if (!isNumArray(box.size, 3) || !(box.size[0] >= 0 && box.size[1] >= 0 && box.size[2] >= 0)) {
          badBox(bw + '.size is not 3 finite numbers ≥ 0');
        }
        if (!isNum(box.yaw)) badBox(bw + '.yaw is not a finite number');
      }
    }

    // Time series: equal lengths, at least one sample, finite, time sorted.
    var t = data.t, frames = data.frames, com = data.com;
    if (!Array.isArray(t) || !Array.isArray(frames) || !Array.isArray(com)) {
      errs.push('"t", "frames" and "com" must be arrays');
      return { errors: errs, stats: stats };
    }
    if (t.length < 1) errs.push('"t" is empty: a replay needs at least one frame');
    if (frames.length !== t.length || com.length !== t.length) {
      errs.push('"t", "frames" and "com" differ in length (' + t.length + ', ' + frames.length + ', ' + com.length + ')');
    }
    var badTime = limited(5);
    for (var k = 0; k < t.length; k++) {
      if (!isNum(t[k])) badTime('t[' + k + '] is not a finite number');
      else if (k > 0 && isNum(t[k - 1]) && t[k] < t[k - 1]) badTime('t[' + k + '] goes back in time');
    }
    var width = 7 * nLinks;
    var badFrame = limited(5);
    for (k = 0; k < frames.length; k++) {
      var f = frames[k];
      if (!Array.isArray(f) || f.length !== width) {
        badFrame('frames[' + k + '] has ' + (Array.isArray(f) ? f.length : 'no') +
          ' numbers; expected ' + width + ' (7 per link × ' + nLinks + ' links)');
        continue;
      }
      for (var j = 0; j < width; j++) {
        if (!isNum(f[j])) { badFrame('frames[' + k + '][' + j + '] is not a finite number'); break; }
      }
    }
    var badCom = limited(5);
    for (k = 0; k < com.length; k++) {
      if (!isNumArray(com[k], 3)) badCom('com[' + k + '] is not 3 finite numbers');
    }
    return { errors: errs, stats: stats };
  }

  // ------------------------------------------------------------ the scene --

  // Three colours in turn, so neighbouring modules differ at a glance.
  var MODULE_COLOURS = [0x3f7fbf, 0xe0a030, 0x5fa872];
  var BOX_COLOURS = {
    wall: 0xa3a3a3,
    ground_obstacle: 0x9c7a5b,
    lath: 0x6f8fae,
    bump: 0x87a06f,
    rough: 0x9a7f9e
  };
  var BOX_COLOUR_OTHER = 0xb0a48a;
  var COM_COLOUR = 0xd0342c;

  function start(THREE, data, stats) {
    var nLinks = data.links.length;
    var nFrames = data.t.length;
    var t = data.t, frames = data.frames, com = data.com;

    var container = document.getElementById('view');
    var renderer;
    try {
      renderer = new THREE.WebGLRenderer({ antialias: true });
    } catch (e) {
      reportError('WebGL 2 is not available in this browser (' + (e && e.message ? e.message : e) + ')');
      return;
    }
    renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
    renderer.shadowMap.enabled = true;
    renderer.shadowMap.type = THREE.PCFShadowMap;
    container.appendChild(renderer.domElement);
    var gl = renderer.getContext();
    var dbg = gl.getExtension('WEBGL_debug_renderer_info');
    api.webgl = String(gl.getParameter(dbg ? dbg.UNMASKED_RENDERER_WEBGL : gl.RENDERER));

    var scene = new THREE.Scene();
    scene.background = new THREE.Color(0xdfe5ea);

    // Shared materials keep ~1000 meshes cheap to draw and to build.
    var linkMaterials = MODULE_COLOURS.map(function (c) {
      return new THREE.MeshStandardMaterial({ color: c, roughness: 0.55, metalness: 0.05 });
    });

    // --- robot: one Object3D per link, visuals as children at their local pose.
    var robot = new THREE.Group();
    scene.add(robot);
    var linkObjects = [];
    var geometryCache = {};
    function geometryFor(vis) {
      var key, make;
      if (vis.shape === 'box') {
        key = 'b' + vis.size.join(',');
        make = function () { return new THREE.BoxGeometry(vis.size[0], vis.size[1], vis.size[2]); };
      } else if (vis.shape === 'sphere') {
        key = 's' + vis.radius;
        make = function () { return new THREE.SphereGeometry(vis.radius, 24, 16); };
      } else if (vis.shape === 'cylinder') {
        key = 'c' + vis.radius + ',' + vis.length;
        // three.js cylinders run along y; URDF's along z: bake the turn in.
        make = function () {
          return new THREE.CylinderGeometry(vis.radius, vis.radius, vis.length, 24).rotateX(Math.PI / 2);
        };
      } else {
        key = 'p' + vis.radius + ',' + vis.length;
        // CapsuleGeometry's height is the straight part only, as in the data.
        make = function () {
          return new THREE.CapsuleGeometry(vis.radius, vis.length, 6, 24).rotateX(Math.PI / 2);
        };
      }
      if (!geometryCache[key]) geometryCache[key] = make();
      return geometryCache[key];
    }
    for (var i = 0; i < nLinks; i++) {
      var link = data.links[i];
      var obj = new THREE.Group();
      obj.name = typeof link.name === 'string' ? link.name : 'link ' + i;
      var moduleIndex = Number.isInteger(link.module) && link.module >= 0 ? link.module : 0;
      var material = linkMaterials[moduleIndex % linkMaterials.length];
      for (var v = 0; v < link.visuals.length; v++) {
        var vis = link.visuals[v];
        if (!SHAPES[vis.shape]) continue;
        var mesh = new THREE.Mesh(geometryFor(vis), material);
        mesh.position.set(vis.pose[0], vis.pose[1], vis.pose[2]);
        mesh.quaternion.set(vis.pose[3], vis.pose[4], vis.pose[5], vis.pose[6]).normalize();
        mesh.castShadow = true;
        mesh.receiveShadow = true;
        obj.add(mesh);
      }
      robot.add(obj);
      linkObjects.push(obj);
    }

    // --- ground: plane at z = 0 with 0.1 m and 1 m grid lines.
    // The grid is a repeated texture, one tile per metre, rather than line
    // geometry: long lines that pass behind the camera get dropped whole by
    // some WebGL implementations (SwiftShader does), and mipmapping fades the
    // distant lines instead of leaving moiré.
    var gx = data.ground.size[0], gy = data.ground.size[1];
    var TILE = 400; // pixels per metre; 40 per 0.1 m line
    var tile = document.createElement('canvas');
    tile.width = tile.height = TILE;
    var g2 = tile.getContext('2d');
    g2.fillStyle = '#f2f2ee';
    g2.fillRect(0, 0, TILE, TILE);
    g2.fillStyle = 'rgba(90, 100, 110, 0.22)';
    for (var n = 1; n < 10; n++) {
      g2.fillRect(n * TILE / 10, 0, 1, TILE);
      g2.fillRect(0, n * TILE / 10, TILE, 1);
    }
    // The metre line straddles the tile edge: one pixel on each side.
    g2.fillStyle = 'rgba(70, 80, 90, 0.6)';
    g2.fillRect(0, 0, 1, TILE);
    g2.fillRect(TILE - 1, 0, 1, TILE);
    g2.fillRect(0, 0, TILE, 1);
    g2.fillRect(0, TILE - 1, TILE, 1);
    var gridTexture = new THREE.CanvasTexture(tile);
    gridTexture.colorSpace = THREE.SRGBColorSpace;
    gridTexture.wrapS = gridTexture.wrapT = THREE.RepeatWrapping;
    gridTexture.anisotropy = renderer.capabilities.getMaxAnisotropy();
    gridTexture.repeat.set(gx, gy);
    // Shift the tiles so metre lines fall on whole metres even when the
    // ground's half-size is not a whole number.
    gridTexture.offset.set(Math.ceil(gx / 2) - gx / 2, Math.ceil(gy / 2) - gy / 2);
    var ground = new THREE.Mesh(
      new THREE.PlaneGeometry(gx, gy),
      new THREE.MeshStandardMaterial({ map: gridTexture, roughness: 0.95 })
    );
    ground.receiveShadow = true;
    scene.add(ground);

    // --- obstacles and walls.
    var boxMeshes = [];
    var boxMaterials = {};
    function boxMaterial(kind) {
      var c = BOX_COLOURS.hasOwnProperty(kind) ? BOX_COLOURS[kind] : BOX_COLOUR_OTHER;
      if (!boxMaterials[c]) boxMaterials[c] = new THREE.MeshStandardMaterial({ color: c, roughness: 0.85 });
      return boxMaterials[c];
    }
    for (var b = 0; b < data.boxes.length; b++) {
      var bx = data.boxes[b];
      var boxMesh = new THREE.Mesh(new THREE.BoxGeometry(bx.size[0], bx.size[1], bx.size[2]), boxMaterial(bx.kind));
      boxMesh.name = typeof bx.name === 'string' ? bx.name : 'box ' + b;
      boxMesh.position.set(bx.center[0], bx.center[1], bx.center[2]);
      boxMesh.rotation.z = bx.yaw;
      boxMesh.castShadow = true;
      boxMesh.receiveShadow = true;
      scene.add(boxMesh);
      boxMeshes.push(boxMesh);
    }

    // --- CoM path: the whole path faint, the part travelled so far strong.
    // Both lines share one position buffer; the second only draws a prefix.
    var comPositions = new Float32Array(nFrames * 3);
    var comBox = new THREE.Box3();
    var p = new THREE.Vector3();
    for (var k = 0; k < nFrames; k++) {
      comPositions[3 * k] = com[k][0];
      comPositions[3 * k + 1] = com[k][1];
      comPositions[3 * k + 2] = com[k][2];
      comBox.expandByPoint(p.set(com[k][0], com[k][1], com[k][2]));
    }
    var comGeometry = new THREE.BufferGeometry();
    comGeometry.setAttribute('position', new THREE.BufferAttribute(comPositions, 3));
    var comTravelledGeometry = new THREE.BufferGeometry();
    comTravelledGeometry.setAttribute('position', comGeometry.getAttribute('position'));
    scene.add(new THREE.Line(comGeometry, new THREE.LineBasicMaterial({
      color: COM_COLOUR, transparent: true, opacity: 0.5 })));
    var comTravelled = new THREE.Line(comTravelledGeometry, new THREE.LineBasicMaterial({ color: COM_COLOUR }));
    comTravelled.frustumCulled = false; // its bounds change with the draw range
    scene.add(comTravelled);

    // --- lights: the sun follows the robot so its shadow box stays small.
    scene.add(new THREE.HemisphereLight(0xffffff, 0x8a8f94, 1.6));
    var sun = new THREE.DirectionalLight(0xffffff, 2.2);
    sun.castShadow = true;
    sun.shadow.mapSize.set(2048, 2048);
    scene.add(sun);
    scene.add(sun.target);
    // From behind the default camera's left shoulder: lit faces toward the
    // viewer, shadows falling away from it.
    var SUN_OFFSET = new THREE.Vector3(0.5, -1.5, 2.5).normalize();

    // Frame 0 fixes the robot's size, which scales the marker and the shadow box.
    var frame = -1;
    function applyFrame(k) {
      var f = frames[k];
      for (var i = 0; i < nLinks; i++) {
        var o = 7 * i, obj = linkObjects[i];
        obj.position.set(f[o], f[o + 1], f[o + 2]);
        // Normalised: a slightly off-unit quaternion must not scale the link.
        obj.quaternion.set(f[o + 3], f[o + 4], f[o + 5], f[o + 6]).normalize();
      }
    }
    applyFrame(0);
    robot.updateMatrixWorld(true);
    var robotBox = new THREE.Box3().setFromObject(robot);
    if (robotBox.isEmpty()) robotBox.setFromCenterAndSize(p.set(com[0][0], com[0][1], com[0][2]), new THREE.Vector3(0.1, 0.1, 0.1));
    var robotSize = robotBox.getSize(new THREE.Vector3()).length();
    // The marker scales with a typical link, not the whole robot: a long
    // chain would otherwise get a ball that hides several modules.
    var linkSizeSum = 0, linkSizeCount = 0, linkBox = new THREE.Box3();
    for (var li = 0; li < nLinks; li++) {
      linkBox.setFromObject(linkObjects[li]);
      if (!linkBox.isEmpty()) {
        linkSizeSum += linkBox.getSize(p).length();
        linkSizeCount += 1;
      }
    }
    var linkSize = linkSizeCount ? linkSizeSum / linkSizeCount : 0.1;

    var comMarker = new THREE.Mesh(
      new THREE.SphereGeometry(Math.max(0.003, 0.08 * linkSize), 16, 12),
      // Drawn on top: the CoM is usually inside the robot's body.
      new THREE.MeshBasicMaterial({ color: COM_COLOUR, depthTest: false })
    );
    comMarker.renderOrder = 10;
    scene.add(comMarker);

    var shadowHalf = Math.max(0.5, robotSize * 1.5);
    sun.shadow.camera.left = -shadowHalf;
    sun.shadow.camera.right = shadowHalf;
    sun.shadow.camera.top = shadowHalf;
    sun.shadow.camera.bottom = -shadowHalf;
    sun.shadow.camera.near = 0.01;
    sun.shadow.camera.far = 40 * shadowHalf;
    sun.shadow.camera.updateProjectionMatrix();

    // ------------------------------------------------------------ camera --

    var camera = new THREE.PerspectiveCamera(40, 1, 0.01, 1000);
    camera.up.set(0, 0, 1);
    // Orbit state: spherical coordinates about target, z up.
    var orbit = { target: new THREE.Vector3(), azimuth: 0, elevation: 0, distance: 1 };
    var groundDiagonal = Math.sqrt(gx * gx + gy * gy);

    function updateCamera() {
      var ce = Math.cos(orbit.elevation);
      camera.position.set(
        orbit.target.x + orbit.distance * ce * Math.cos(orbit.azimuth),
        orbit.target.y + orbit.distance * ce * Math.sin(orbit.azimuth),
        orbit.target.z + orbit.distance * Math.sin(orbit.elevation));
      camera.near = Math.max(1e-3, orbit.distance * 0.01);
      camera.far = Math.max(orbit.distance * 50, groundDiagonal * 2 + orbit.distance);
      camera.updateProjectionMatrix();
      camera.lookAt(orbit.target);
      requestRender();
    }

    // Robot's centre at the current frame, from the meshes themselves.
    function robotCentre() {
      robot.updateMatrixWorld(true);
      var box = new THREE.Box3().setFromObject(robot);
      return box.isEmpty() ? new THREE.Vector3(com[frame][0], com[frame][1], com[frame][2]) : box.getCenter(new THREE.Vector3());
    }

    // 3/4 view of the robot at frame 0, from just far enough back that the
    // whole CoM path and the robot fit on screen. Exact per-corner fit: a
    // bounding sphere would leave the robot needlessly small.
    function fitAt(azimuth, elevation) {
      orbit.target.copy(robotBox.getCenter(new THREE.Vector3()));
      orbit.azimuth = azimuth;
      orbit.elevation = elevation;
      orbit.distance = 1;
      updateCamera();
      camera.updateMatrixWorld();
      var right = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 0);
      var up = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 1);
      var back = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 2);
      var tanV = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2));
      var tanH = tanV * camera.aspect;
      var all = robotBox.clone().union(comBox);
      var need = 0.05;
      for (var c = 0; c < 8; c++) {
        p.set(c & 1 ? all.max.x : all.min.x, c & 2 ? all.max.y : all.min.y, c & 4 ? all.max.z : all.min.z);
        p.sub(orbit.target);
        // At camera distance D this corner is D + beyond deep; it fits when
        // its sideways offsets stay inside the frustum at that depth.
        var beyond = -p.dot(back);
        need = Math.max(need, Math.abs(p.dot(right)) / tanH - beyond, Math.abs(p.dot(up)) / tanV - beyond);
      }
      // Margin for the title and the control bar drawn over the view.
      orbit.distance = 1.25 * need;
      updateCamera();
      camera.updateMatrixWorld();
    }

    // Whether a wall or obstacle stands between the camera and the robot
    // (its centre or a corner of its box): a robot in a corridor or a maze
    // must not open behind a wall.
    var ray = new THREE.Raycaster();
    function occluded() {
      if (boxMeshes.length === 0) return false;
      var points = [robotBox.getCenter(new THREE.Vector3())];
      for (var c = 0; c < 8; c++) {
        points.push(new THREE.Vector3(c & 1 ? robotBox.max.x : robotBox.min.x,
          c & 2 ? robotBox.max.y : robotBox.min.y, c & 4 ? robotBox.max.z : robotBox.min.z));
      }
      for (var i = 0; i < points.length; i++) {
        var dir = points[i].clone().sub(camera.position);
        var far = dir.length();
        ray.set(camera.position, dir.normalize());
        ray.far = far;
        if (ray.intersectObjects(boxMeshes, false).length > 0) return true;
      }
      return false;
    }

    // The first 3/4 view with nothing in the way, from low to high: ahead of
    // the robot's left, then the other sides; straight down when every side
    // is walled in.
    function fitView() {
      var elevations = [Math.PI / 6, Math.PI / 4, Math.PI / 3, 5 * Math.PI / 12];
      var azimuths = [-Math.PI / 3, -2 * Math.PI / 3, Math.PI / 3, 2 * Math.PI / 3, -Math.PI / 2, Math.PI / 2, 0, Math.PI];
      for (var e = 0; e < elevations.length; e++) {
        for (var a = 0; a < azimuths.length; a++) {
          fitAt(azimuths[a], elevations[e]);
          if (!occluded()) return;
        }
      }
      fitAt(-Math.PI / 2, 1.5);
    }

    // --------------------------------------------------------- rendering --

    // Draws on demand (camera moved, frame changed) or every frame while
    // playing; an idle replay costs nothing.
    var renderQueued = false;
    function requestRender() {
      if (renderQueued) return;
      renderQueued = true;
      requestAnimationFrame(tick);
    }

    function resize() {
      var w = Math.max(1, container.clientWidth), h = Math.max(1, container.clientHeight);
      renderer.setSize(w, h, false);
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
      requestRender();
    }

    // ---------------------------------------------------------- playback --

    var ui = {
      play: document.getElementById('play'),
      time: document.getElementById('time'),
      speed: document.getElementById('speed'),
      clock: document.getElementById('clock')
    };
    var tEnd = t[nFrames - 1];
    var playTime = t[0];     // playback clock, in data time
    var lastWall = null;     // performance.now() of the previous tick while playing
    var speed = Number(ui.speed.value) || 1;

    function showFrame(k) {
      frame = k;
      api.frame = k;
      applyFrame(k);
      comMarker.position.set(com[k][0], com[k][1], com[k][2]);
      comTravelledGeometry.setDrawRange(0, k + 1);
      sun.target.position.copy(comMarker.position);
      sun.position.copy(comMarker.position).addScaledVector(SUN_OFFSET, 20 * shadowHalf);
      if (String(k) !== ui.time.value) ui.time.value = String(k);
      ui.clock.textContent = 't = ' + t[k].toFixed(2) + ' s / ' + tEnd.toFixed(2) + ' s';
      requestRender();
    }

    // Last frame whose time is ≤ time (t is sorted).
    function frameAt(time) {
      var lo = 0, hi = nFrames - 1;
      if (time >= t[hi]) return hi;
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (t[mid] <= time) lo = mid; else hi = mid - 1;
      }
      return lo;
    }

    function setPlaying(on) {
      api.playing = on;
      ui.play.textContent = on ? 'Pause' : 'Play';
      lastWall = null;
      if (on) requestRender();
    }

    function play() {
      // At the end, play means "again from the start".
      if (frame >= nFrames - 1) { playTime = t[0]; showFrame(0); }
      setPlaying(nFrames > 1);
    }

    function pause() { setPlaying(false); }

    function setFrame(k) {
      k = Math.round(Number(k));
      if (!isFinite(k)) return;
      k = Math.min(nFrames - 1, Math.max(0, k));
      playTime = t[k];
      showFrame(k);
    }

    function tick(now) {
      // renderQueued stays set until the render below, so changes made
      // during this tick do not queue a second, redundant one.
      if (api.playing) {
        if (lastWall !== null) {
          // Capped so a backgrounded tab does not jump ahead on return.
          playTime += Math.min(now - lastWall, 250) / 1000 * speed;
        }
        lastWall = now;
        var k = frameAt(playTime);
        if (k !== frame) showFrame(k);
        if (playTime >= tEnd) pause();
      }
      renderer.render(scene, camera);
      renderQueued = false;
      if (api.playing) requestRender();
    }

    // --------------------------------------------------------- UI events --

    ui.play.addEventListener('click', function () { if (api.playing) pause(); else play(); });
    ui.time.addEventListener('input', function () { pause(); setFrame(ui.time.value); });
    ui.speed.addEventListener('change', function () { speed = Number(ui.speed.value) || 1; });

    window.addEventListener('keydown', function (e) {
      var tag = e.target && e.target.tagName;
      // Leave keys to form controls that use them natively: space clicks a
      // focused button, arrows move the slider and the speed select.
      if (e.key === ' ' || e.code === 'Space') {
        if (tag === 'BUTTON' || tag === 'SELECT') return;
        e.preventDefault();
        if (api.playing) pause(); else play();
      } else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
        if (tag === 'INPUT' || tag === 'SELECT') return;
        e.preventDefault();
        pause();
        setFrame(frame + (e.key === 'ArrowLeft' ? -1 : 1));
      }
    });

    // Orbit camera: left drag rotates, right or shift drag pans, wheel zooms,
    // double-click re-centres on the robot.
    var canvas = renderer.domElement;
    var drag = null;
    canvas.addEventListener('contextmenu', function (e) { e.preventDefault(); });
    canvas.addEventListener('pointerdown', function (e) {
      drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey || e.button === 1 };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointermove', function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX;
      drag.y = e.clientY;
      if (drag.pan) {
        // Scale so the point under the cursor stays under it at the target's depth.
        var perPixel = 2 * orbit.distance * Math.tan(THREE.MathUtils.degToRad(camera.fov / 2)) / Math.max(1, canvas.clientHeight);
        var right = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 0);
        var up = new THREE.Vector3().setFromMatrixColumn(camera.matrixWorld, 1);
        orbit.target.addScaledVector(right, -dx * perPixel).addScaledVector(up, dy * perPixel);
      } else {
        orbit.azimuth -= dx * 0.008;
        orbit.elevation = THREE.MathUtils.clamp(orbit.elevation + dy * 0.008, -1.45, 1.55);
      }
      updateCamera();
    });
    function endDrag(e) {
      if (!drag) return;
      drag = null;
      if (canvas.hasPointerCapture(e.pointerId)) canvas.releasePointerCapture(e.pointerId);
    }
    canvas.addEventListener('pointerup', endDrag);
    canvas.addEventListener('pointercancel', endDrag);
    canvas.addEventListener('wheel', function (e) {
      e.preventDefault();
      // Line- and page-mode wheels report small deltas; treat them as pixels.
      var delta = e.deltaMode === 0 ? e.deltaY : e.deltaY * 40;
      orbit.distance = THREE.MathUtils.clamp(orbit.distance * Math.exp(delta * 0.001),
        1e-3, Math.max(10, groundDiagonal * 5));
      updateCamera();
    }, { passive: false });
    canvas.addEventListener('dblclick', function () {
      orbit.target.copy(robotCentre());
      updateCamera();
    });
    window.addEventListener('resize', resize);

    // ---------------------------------------------------------- go live --

    ui.time.max = String(nFrames - 1);
    ui.time.disabled = false;
    ui.play.disabled = nFrames < 2;

    var v3 = new THREE.Vector3(), q = new THREE.Quaternion(), s = new THREE.Vector3();
    api.frameCount = nFrames;
    api.setFrame = setFrame;
    api.play = play;
    api.pause = pause;
    api.linkWorldPose = function (i) {
      if (!(i >= 0 && i < nLinks)) return null;
      scene.updateMatrixWorld(true);
      linkObjects[i].matrixWorld.decompose(v3, q, s);
      return [v3.x, v3.y, v3.z, q.x, q.y, q.z, q.w];
    };
    api.comMarker = function () {
      scene.updateMatrixWorld(true);
      comMarker.getWorldPosition(v3);
      return [v3.x, v3.y, v3.z];
    };
    // The camera's orbit about its target: azimuth, elevation (rad above the ground),
    // distance (m).
    api.view = function () {
      return { azimuth: orbit.azimuth, elevation: orbit.elevation, distance: orbit.distance };
    };

    resize();
    setFrame(0);
    // The walls' world matrices, before fitView casts rays at them (three.js updates them
    // only when it renders).
    scene.updateMatrixWorld(true);
    fitView();
    renderer.render(scene, camera);
    api.ready = true;
  }

  // ------------------------------------------------------------- startup --

  function setHeader(data, stats) {
    function str(v) { return typeof v === 'string' && v ? v : '?'; }
    var title = typeof data.title === 'string' && data.title
      ? data.title
      : [str(data.robot), str(data.controller), str(data.world)].join(' · ');
    document.getElementById('title').textContent = title;
    document.title = title + ' · modbot replay';
    var parts = [];
    if (Array.isArray(data.links)) parts.push(data.links.length + ' links');
    if (Array.isArray(data.t)) {
      parts.push(data.t.length + ' frames' + (isNum(data.rate_hz) ? ' at ' + data.rate_hz + ' Hz' : ''));
    }
    if (stats && stats.skippedVisuals) {
      parts.push(stats.skippedVisuals + ' visual' + (stats.skippedVisuals === 1 ? '' : 's') + ' of unsupported shape not shown');
    }
    document.getElementById('info').textContent = parts.join(' · ');
  }

  function main() {
    var el = document.getElementById('replay-data');
    var data;
    try {
      data = JSON.parse(el ? el.textContent : '');
    } catch (e) {
      reportError('replay data is not valid JSON: ' + e.message);
      return;
    }
    var checked = validate(data);
    if (data && typeof data === 'object' && !Array.isArray(data)) setHeader(data, checked.stats);
    if (checked.errors.length) {
      checked.errors.forEach(reportError);
      return;
    }
    function go(THREE) {
      try {
        start(THREE, data, checked.stats);
      } catch (e) {
        reportError('could not build the scene: ' + (e && e.message ? e.message : e));
      }
    }
    if (window.THREE) {
      go(window.THREE);
    } else if (window.modbotThree && typeof window.modbotThree.then === 'function') {
      window.modbotThree.then(go, function (e) {
        reportError('could not load three.js: ' + (e && e.message ? e.message : e));
      });
    } else {
      reportError('three.js is missing from this page');
    }
  }

  main();
})();
