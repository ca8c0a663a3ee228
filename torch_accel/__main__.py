"""``python -m torch_accel <command>``.

info                        a deviceQuery: driver, devices, capacity, free memory, torch,
                            CUDA plugin
preflight SCRIPT [ARGS...]  lists the ops of one training step that would fall back to the
                            CPU, on fake tensors (SCRIPT defines preflight_step(argv))
trace                       the aten ops of one LoRA training step (float32 and bf16
                            autocast), as JSON
coverage                    the OpInfo conformance sweep: op x dtype -> native / fallback /
                            fail / skip
"""

import argparse
import sys


def _info(args) -> int:
    import torch

    import torch_accel
    from torch_accel import _C

    mib = 1024 * 1024
    built_against = _C._built_torch_version()
    print(f"torch_accel      {torch_accel.__version__} (built against torch {built_against})")
    print(f"torch            {torch.__version__}")
    print(f"driver           {torch_accel.driver()}")
    status = _C._cuda_plugin_status()
    built = _C._cuda_plugin_built()
    print(
        f"cuda plugin      {'built' if built else 'not built'}"
        f"{'' if not built else (', usable' if not status else ', not usable: ' + status)}"
    )
    print(f"fallback mode    {torch_accel.fallback_mode()}")
    print(f"devices          {torch.accel.device_count()}")
    for i in range(torch.accel.device_count()):
        p = torch.accel.get_device_properties(i)
        free, total = torch.accel.mem_get_info(i)
        print(f"  accel:{i}  {p.name}")
        print(f"    capacity     {total / mib:,.0f} MiB  (free {free / mib:,.0f} MiB)")
        print(f"    compute      {p.multi_processor_count} units, capability {p.major}.{p.minor}")
    return 0


def _preflight(args) -> int:
    import runpy

    from torch_accel import preflight

    namespace = runpy.run_path(args.script, run_name="__preflight__")
    if "preflight_step" not in namespace:
        print(
            f"error: {args.script} defines no preflight_step(argv) returning a step function",
            file=sys.stderr,
        )
        return 2
    report = preflight.run(namespace["preflight_step"](args.script_args))
    print(report.format())
    return 0


def _trace(args) -> int:
    from torch_accel.devtools import op_trace

    ops, examples = op_trace.write_trace(args.out)
    print(f"{len(ops)} aten ops traced -> {args.out}")
    missing = op_trace.not_native_ops(examples)
    print(f"not native on accel: {len(missing)}")
    for name, reached in missing.items():
        print(f"  {name:40s} -> {' '.join(reached)}")
    return 0


def _coverage(args) -> int:
    from torch_accel.devtools import coverage

    dtypes = [coverage.parse_dtype(d) for d in args.dtypes.split(",")]
    results, seconds = coverage.sweep(dtypes, args.samples, args.ops, progress=args.verbose)
    summary = coverage.write_report(results, args.out, args.samples, seconds)
    print(summary)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m torch_accel",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="describe the driver and the devices").set_defaults(func=_info)
    pre = sub.add_parser("preflight", help="ops of one training step that would fall back")
    pre.add_argument("script")
    pre.add_argument("script_args", nargs=argparse.REMAINDER)
    pre.set_defaults(func=_preflight)
    trace = sub.add_parser("trace", help="record the aten ops of one LoRA training step")
    trace.add_argument("--out", default="tests/traced_ops.json")
    trace.set_defaults(func=_trace)
    cov = sub.add_parser("coverage", help="OpInfo sweep, accel vs CPU, into a manifest")
    cov.add_argument("--samples", type=int, default=0, help="samples per op (0: all)")
    cov.add_argument("--dtypes", default="float32,bfloat16,float16,complex64,int64")
    cov.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    cov.add_argument("--out", default="docs/", help="folder for op_coverage.{json,md}")
    cov.add_argument("-v", "--verbose", action="store_true", help="print each op x dtype")
    cov.set_defaults(func=_coverage)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
