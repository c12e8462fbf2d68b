#!/usr/bin/env python3
"""Writes a copy of a Piper voice whose text encoder, duration predictor and flow keep their
convolutions' weights in 8 bits; the decoder, which makes the audio, stays in float32.

A Piper "medium" voice is about 63 MB of float32 weights, nearly all of them convolutions:
en_US-joe-medium's text encoder holds 25 MB, its flow 28 MB, its duration predictor 2 MB, and
its decoder (HiFi-GAN) 7 MB. The worker keeps them all in its heap, so the voice costs about as
much memory as the Whisper worker. The encoder and the flow run once per phoneme or per frame of
86 a second, the decoder once per audio sample, 256 times more often: their weights are nearly all
the voice's memory and little of its work. ONNX Runtime's dynamic quantization
(`onnxruntime.quantization.quantize_dynamic`, unsigned 8-bit weights with one scale each,
ConvInteger at run time) applied to their convolutions alone takes the file from 63 to 22 MB and
the worker's heap down by about 30 MiB, for the same words heard back and about the same CPU
(docs/benchmarks.md, "Piper's voice with 8-bit weights"). The result is the same bytes on every
run.

Needs, on PYTHONPATH, onnx, protobuf, ml_dtypes and packaging (the pinned wheels of engines/wheels.lock,
used here at build time only, never by Parley) and onnxruntime (the voice worker's).

Usage: engines/piper-int8.py IN.onnx OUT.onnx
"""
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    source, target = sys.argv[1], sys.argv[2]
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(source)
    decoder = [node.name for node in model.graph.node if node.name.startswith("/dec/")]
    if not decoder:
        sys.exit(f"{source}: no decoder nodes (/dec/...): not a Piper (VITS) voice this knows")
    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process: shape inference, not needed here
    quantize_dynamic(source, target, weight_type=QuantType.QUInt8, op_types_to_quantize=["Conv"], nodes_to_exclude=decoder)
    print(f"{target}: {os.path.getsize(source) / 1e6:.1f} MB -> {os.path.getsize(target) / 1e6:.1f} MB "
          f"(the decoder's {len(decoder)} nodes in float32)")


if __name__ == "__main__":
    main()
