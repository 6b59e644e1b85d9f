"""onnxruntime as one contender of benchmarks/model_e2e, in a process of its own.

model_e2e (C++) cannot link onnxruntime (its PyPI wheel carries no headers), so it starts
this script under the venv's interpreter that scripts/bench.sh makes, and times it in
the same interleaved rounds as its own contenders over a line protocol on stdin/stdout:

  start:          MODEL THREADS NAME=INPUT.npy ...   (argv)   -> "ready onnxruntime VERSION"
  "round MS"      calls until MS milliseconds have passed      -> "seconds PER_CALL"
  "output PATH"   one run; the model's first output to PATH    -> "saved"
  "quit"          exits

The session is onnxruntime's CPU provider with every graph optimisation on,
intra_op_num_threads = THREADS (Temper's) and one inter-op thread: what a user choosing
onnxruntime for a CPU deployment would run. Any failure is one line "error: ..." on stdout
and a non-zero exit, so model_e2e can say what went wrong.
"""
import sys
import time


def main(argv):
    if len(argv) < 3:
        print("error: usage: onnxruntime_runner.py MODEL THREADS NAME=INPUT.npy ...", flush=True)
        return 2
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        print(f"error: {e}; scripts/bench.sh model_e2e installs onnxruntime into bench_logs/venv", flush=True)
        return 1
    model, threads = argv[1], int(argv[2])
    feeds = {}
    for item in argv[3:]:
        name, _, path = item.partition("=")
        feeds[name] = np.load(path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    session.run(None, feeds)
    print(f"ready onnxruntime {ort.__version__}", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "round":
            budget_s = float(words[1]) / 1e3
            calls = 0
            start = time.perf_counter()
            while True:
                session.run(None, feeds)
                calls += 1
                elapsed = time.perf_counter() - start
                if elapsed >= budget_s:
                    break
            print(f"seconds {elapsed / calls:.9g}", flush=True)
        elif words[0] == "output":
            out = session.run(None, feeds)[0]
            np.save(words[1], np.ascontiguousarray(out, dtype=np.float32))
            print("saved", flush=True)
        elif words[0] == "quit":
            return 0
        else:
            print(f"error: unknown command '{words[0]}'", flush=True)
            return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Exception as e:  # one line model_e2e can print, not a traceback it cannot parse
        print(f"error: {type(e).__name__}: {e}", flush=True)
        sys.exit(1)
