"""verl custom reward function that asks a running `stepwise serve rewards` server.

Use in a verl config:
    custom_reward_function.path=integrations/verl/stepwise_reward.py
    custom_reward_function.name=compute_score
(newer verl releases: reward.custom_reward_function.path / .name)

Environment:
    STEPWISE_REWARD_URL    base URL of the reward server (default http://127.0.0.1:8765)
    STEPWISE_REWARD_TOKEN  bearer token, when the server was started with --token
    STEPWISE_REWARD_TIMEOUT  seconds per request (default 60)

Standard library only, so it runs in any verl worker environment.
"""

import json
import os
import time
import urllib.error
import urllib.request

_URL = os.environ.get("STEPWISE_REWARD_URL", "http://127.0.0.1:8765").rstrip("/")
_TOKEN = os.environ.get("STEPWISE_REWARD_TOKEN")
_TIMEOUT = float(os.environ.get("STEPWISE_REWARD_TIMEOUT", "60"))
_RETRIES = 3


def _post(body):
    data = json.dumps(body).encode("utf-8")
    headers = {"content-type": "application/json"}
    if _TOKEN:
        headers["authorization"] = "Bearer " + _TOKEN
    last = None
    for attempt in range(_RETRIES):
        request = urllib.request.Request(_URL + "/get_reward", data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            # A 4xx is our request's fault: retrying will not help.
            if 400 <= err.code < 500:
                raise RuntimeError("stepwise reward server refused the request: %s %s" % (err.code, err.read()[:500]))
            last = err
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            last = err
        time.sleep(0.5 * (2 ** attempt))
    raise RuntimeError("stepwise reward server at %s did not answer: %s" % (_URL, last))


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl reward hook: the reward for one response.

    `solution_str` is the decoded response, `ground_truth` the row's reward_model.ground_truth
    (for the judge RL set: "Positive" or "Negative"). verl passes the row's `extra_info` but not
    its prompt, so the problem is read from `extra_info["question"]` (written by `stepwise export`,
    and the key verl's own data recipes use): the `judge` reward scores the response against it.
    Returns a dict with the score and the server's extra logs, which verl records as metrics.
    """
    question = ""
    if isinstance(extra_info, dict):
        for key in ("question", "problem", "prompt"):
            if isinstance(extra_info.get(key), str) and extra_info[key]:
                question = extra_info[key]
                break
    reply = _post({"query": [question + solution_str], "prompts": [question], "labels": [str(ground_truth)]})
    result = {"score": float(reply["rewards"][0])}
    for name, values in (reply.get("extra_logs") or {}).items():
        if isinstance(values, list) and values:
            result[name] = values[0]
    return result
