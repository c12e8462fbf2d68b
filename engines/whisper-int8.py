#!/usr/bin/env python3
"""Writes an int8 copy of a CTranslate2 model.bin whose weights are float16 or float32.

CTranslate2 quantizes a float16 model to int8 every time it loads it with compute_type "int8":
the worker's memory peaks at about 300 MB while the float16 and float32 copies of the weights
are alive, and the heap it used keeps pages afterwards. A model.bin already in int8 loads as
it is stored. The quantization is CTranslate2's own (ctranslate2/specs/model_spec.py,
`_quantize` for "int8"): each 2-D weight, of a linear or embedding layer ("…/weight"),
becomes int8 with one float32 scale per output row ("…/weight_scale", 127 / the row's largest
magnitude, values rounded to nearest even); every other floating-point variable, the
convolutions' 3-D weights among them (CTranslate2 keeps Whisper's convolutions in float when it
quantizes at load), becomes float32. Aliases are kept. On the 44 recordings of ../shared/speech
(en and es) Whisper base then writes the same tokens with the same scores as the float16 model
quantized at load (docs/benchmarks.md). Needs numpy only (no ctranslate2), so one machine can prepare the
model for another.

Usage: engines/whisper-int8.py IN/model.bin OUT/model.bin
"""
import struct
import sys

import numpy as np

# CTranslate2's DataType enum (include/ctranslate2/types.h), in order.
DTYPES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")


def read_string(f):
    (length,) = struct.unpack("H", f.read(2))
    return f.read(length)[:-1].decode("utf-8")


def write_string(f, text):
    data = text.encode("utf-8")
    f.write(struct.pack("H", len(data) + 1) + data + b"\0")


def read_model(path):
    with open(path, "rb") as f:
        (version,) = struct.unpack("I", f.read(4))
        if version != 6:
            raise SystemExit(f"{path}: binary version {version}, this reads version 6")
        name = read_string(f)
        (revision,) = struct.unpack("I", f.read(4))
        (count,) = struct.unpack("I", f.read(4))
        variables = []
        for _ in range(count):
            variable = read_string(f)
            (rank,) = struct.unpack("B", f.read(1))
            shape = struct.unpack(f"{rank}I", f.read(4 * rank)) if rank else ()
            (dtype,) = struct.unpack("B", f.read(1))
            (size,) = struct.unpack("I", f.read(4))
            if DTYPES[dtype] == "bfloat16":
                raise SystemExit(f"{path}: {variable} is bfloat16, which this does not read")
            value = np.frombuffer(f.read(size), dtype=DTYPES[dtype]).reshape(shape)
            variables.append((variable, value))
        (count,) = struct.unpack("I", f.read(4))
        aliases = [(read_string(f), read_string(f)) for _ in range(count)]
        if f.read(1):
            raise SystemExit(f"{path}: bytes after the aliases")
    return version, name, revision, variables, aliases


def quantize(variables):
    out = []
    for name, value in variables:
        floating = value.dtype in (np.float16, np.float32)
        if name.rsplit("/", 1)[-1] == "weight" and floating and value.ndim == 2:
            value = value.astype(np.float32)
            amax = np.amax(np.absolute(value), axis=1)
            amax[amax == 0] = 127.0
            amax = np.maximum(amax, np.float32(127) / np.finfo(np.float32).max)
            scale = (127.0 / amax).astype(np.float32)
            value = value * np.expand_dims(scale, 1)
            value = np.rint(value).astype(np.int8)
            out += [(name, value), (name + "_scale", scale)]
        elif floating and value.ndim > 0:
            out.append((name, value.astype(np.float32)))
        else:
            out.append((name, value))
    return out


def write_model(path, version, name, revision, variables, aliases):
    with open(path, "wb") as f:
        f.write(struct.pack("I", version))
        write_string(f, name)
        f.write(struct.pack("=II", revision, len(variables)))
        for variable, value in variables:
            write_string(f, variable)
            f.write(struct.pack("B", value.ndim) + struct.pack(f"{value.ndim}I", *value.shape))
            data = np.ascontiguousarray(value).tobytes()
            f.write(struct.pack("=BI", DTYPES.index(value.dtype.name), len(data)) + data)
        f.write(struct.pack("I", len(aliases)))
        for alias, variable in aliases:
            write_string(f, alias)
            write_string(f, variable)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    version, name, revision, variables, aliases = read_model(sys.argv[1])
    write_model(sys.argv[2], version, name, revision, quantize(variables), aliases)


if __name__ == "__main__":
    main()
