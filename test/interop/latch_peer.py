"""An rclpy node serving std_srvs/SetBool as a connector's latch would (used by
modbot_ros/tests/interop.rs to check modbot's service clients against real ROS 2).

    latch_peer.py --service /peer/connectors/front/latch --timeout 30

Answers each request with success = the request's data and the message `closing` (data true)
or `refused: nothing to open` (data false); once it has answered a request with data false
(a client may send one more than once), or at --timeout, prints one JSON object with the
data of every request it answered, and exits 0 if one was false.
"""
import argparse
import json
import time

import rclpy
from rclpy.node import Node
from std_srvs.srv import SetBool


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--service", required=True)
    ap.add_argument("--timeout", type=float, default=30.0)
    a = ap.parse_args()
    rclpy.init()
    node = Node("latch_peer")
    seen = []

    def answer(request, response):
        seen.append(bool(request.data))
        response.success = bool(request.data)
        response.message = "closing" if request.data else "refused: nothing to open"
        return response

    node.create_service(SetBool, a.service, answer)
    deadline = time.time() + a.timeout
    while time.time() < deadline and False not in seen:
        rclpy.spin_once(node, timeout_sec=0.1)
    # Answers go out in spin_once; give the last one a moment on the wire.
    end = time.time() + 1.0
    while time.time() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    print(json.dumps({"requests": seen}))
    node.destroy_node()
    rclpy.shutdown()
    return 0 if False in seen else 1


if __name__ == "__main__":
    raise SystemExit(main())
