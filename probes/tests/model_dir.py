"""A small Hugging Face model directory, written by the tests: config, tokenizer files, a sharded weights index."""

import json
from pathlib import Path


def write_model_dir(root: Path, name: str = "qwen-tiny") -> Path:
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps({"model_type": "qwen2", "hidden_size": 8, "num_hidden_layers": 1}))
    (path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 32}))
    (path / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0}}}))
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    for i, shard in enumerate(shards):
        (path / shard).write_bytes(bytes([i]) * 64)
    index = {"metadata": {"total_size": 128}, "weight_map": {"embed.weight": shards[0], "lm_head.weight": shards[1]}}
    (path / "model.safetensors.index.json").write_text(json.dumps(index))
    return path
