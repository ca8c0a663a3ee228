"""``python -m torch_accel <command>``.

  info      a deviceQuery: driver, devices, capacity, free memory, torch, CUDA plugin
"""
import argparse
import sys


def _info(args) -> int:
    import torch
    import torch_accel
    from torch_accel import _C

    mib = 1024 * 1024
    print(f"torch_accel      {torch_accel.__version__} (built against torch {_C._built_torch_version()})")
    print(f"torch            {torch.__version__}")
    print(f"driver           {torch_accel.driver()}")
    status = _C._cuda_plugin_status()
    built = _C._cuda_plugin_built()
    print(f"cuda plugin      {'built' if built else 'not built'}"
          f"{'' if not built else (', usable' if not status else ', not usable: ' + status)}")
    print(f"fallback mode    {torch_accel.fallback_mode()}")
    print(f"devices          {torch.accel.device_count()}")
    for i in range(torch.accel.device_count()):
        p = torch.accel.get_device_properties(i)
        free, total = torch.accel.mem_get_info(i)
        print(f"  accel:{i}  {p.name}")
        print(f"    capacity     {total / mib:,.0f} MiB  (free {free / mib:,.0f} MiB)")
        print(f"    compute      {p.multi_processor_count} units, capability {p.major}.{p.minor}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_accel", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="describe the driver and the devices").set_defaults(func=_info)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
