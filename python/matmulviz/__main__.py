"""python3 -m matmulviz SCRIPT [ARGS...] --report PATH

Runs SCRIPT as __main__ (with `import matmulviz.torch as torch` inside it, its CUDA tensors live
on the simulated device) and writes the report of its allocations to PATH. A script that raises
exits with status 1 after printing the traceback; the report of what ran is still written,
marked incomplete."""

import os
import runpy
import sys

from matmulviz import record

USAGE = "usage: python3 -m matmulviz SCRIPT [ARGS...] [--report PATH]"


def main(argv):
    report = None
    args = list(argv)
    if "--report" in args:
        i = args.index("--report")
        if i + 1 >= len(args):
            print(f"matmulviz: --report needs a path\n{USAGE}", file=sys.stderr)
            return 2
        report = args[i + 1]
        del args[i:i + 2]
    if not args or args[0] in ("-h", "--help"):
        print(USAGE + "\n\n" + __doc__.split("\n", 2)[2], file=sys.stderr if not args else sys.stdout)
        return 0 if args else 2
    script = args[0]
    if not os.path.isfile(script):
        print(f"matmulviz: no such script: {script}", file=sys.stderr)
        return 2
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        if report is None:
            runpy.run_path(script, run_name="__main__")
        else:
            with record(report, script=script, argv=args) as recording:
                # The script's globals when it ended name the blocks they held; they are
                # released right after, inside the recording, as before.
                recording.name_variables(runpy.run_path(script, run_name="__main__"))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return code
    except BaseException:
        import traceback
        traceback.print_exc()
        if report is not None:
            print(f"matmulviz: the script failed; the report of what ran is in {report} "
                  "(marked incomplete)", file=sys.stderr)
        return 1
    if report is not None:
        print(f"matmulviz: wrote {report}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
