# Runs OpenRLHF's own SFT row reader on rows stepwise exported, the way its SFTDataset does.
#
# usage: python3 openrlhf-sft.py PEER_FILE TEMPLATE_FILE ROWS_JSONL INPUT_KEY OUTPUT_KEY
#
# PEER_FILE is ../shared/peers/openrlhf/sft_preprocess.py (OpenRLHF's preprocess_data, unchanged;
# its header names repository, file and commit); it is loaded from there, never copied. Each row is
# read twice: without --apply_chat_template (prompt and response as they are) and with it, where
# OpenRLHF passes tokenizer.apply_chat_template. That call is stood in for by TEMPLATE_FILE rendered
# the way transformers renders chat templates (jinja2 sandbox, trim_blocks, lstrip_blocks,
# loopcontrols, a tojson filter that keeps non-ASCII, raise_exception). Prints one JSON object per
# row: {"id", "plain": [prompt, response] | {"error"}, "chat": [prompt, response] | {"error"}}.
import importlib.util
import json
import sys

import jinja2
import jinja2.ext
import jinja2.sandbox


def load_peer(path):
    spec = importlib.util.spec_from_file_location("openrlhf_sft_preprocess", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.preprocess_data


def template_renderer(source):
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )

    def fail(message):
        raise jinja2.exceptions.TemplateError(message)

    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    env.globals["raise_exception"] = fail
    compiled = env.from_string(source)

    def apply_chat_template(messages, tokenize=False, add_generation_prompt=False):
        if tokenize:
            raise ValueError("the harness renders text only")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise TypeError(f"apply_chat_template expects a list of messages, got {type(messages).__name__}")
        return compiled.render(
            messages=messages, add_generation_prompt=add_generation_prompt, bos_token="", eos_token=""
        )

    return apply_chat_template


def outcome(run):
    try:
        prompt, response = run()
        # SFTDataset tokenizes prompt + response next: both must be text.
        if not isinstance(prompt, str) or not isinstance(response, str):
            raise TypeError(f"prompt is {type(prompt).__name__}, response is {type(response).__name__}")
        return [prompt, response]
    except Exception as e:  # noqa: BLE001 - the test reports whatever the peer raised
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    peer_file, template_file, rows_file, input_key, output_key = sys.argv[1:6]
    preprocess_data = load_peer(peer_file)
    with open(template_file, encoding="utf-8") as f:
        apply_chat_template = template_renderer(f.read())
    with open(rows_file, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            plain = outcome(lambda: preprocess_data(row, None, input_key, output_key, None))
            chat = outcome(lambda: preprocess_data(row, None, input_key, output_key, apply_chat_template))
            print(json.dumps({"id": row.get("id"), "plain": plain, "chat": chat}, ensure_ascii=False))


main()
