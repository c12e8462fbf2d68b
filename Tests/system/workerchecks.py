"""What the checks of the Python workers (libexec/) share: a worker loaded as a module, without
its engine (its `main` is not run), and the failures gathered and reported."""
import importlib.machinery
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True


def load(name):
    """libexec/NAME as a module."""
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), os.path.join(ROOT, "libexec", name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class Checks:
    """Gathers what failed; `finish` prints it (exit 1), or the summary when nothing did."""

    def __init__(self, name):
        self.name, self.failures = name, []

    def __call__(self, condition, what):
        if not condition:
            self.failures.append(what)

    def finish(self, summary):
        if self.failures:
            for failure in self.failures:
                print(f"{self.name}: {failure}", file=sys.stderr)
            sys.exit(1)
        print(f"{self.name}: {summary}")
