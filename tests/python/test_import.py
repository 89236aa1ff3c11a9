"""What importing the package needs: `import remat` nothing but the extension (no PyTorch, no numpy), and
`import remat.torch` PyTorch, which it names with where to get it when missing (was: a bare "No module named
'torch'" from inside the package)."""

import subprocess
import sys

WITHOUT = "import sys\nfor name in ('torch', 'numpy'):\n    sys.modules[name] = None  # import fails as if absent\n"


def run(script):
    return subprocess.run([sys.executable, "-c", WITHOUT + script], capture_output=True, text=True, timeout=60)


def test_remat_imports_without_torch_or_numpy():
    done = run("import remat\nprint(remat.revolve(10, 3).forward_steps, remat.tradeoff(100).store_all_slots)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["15", "99"]


def test_remat_torch_without_torch_says_what_it_needs():
    done = run("try:\n    import remat.torch\nexcept ModuleNotFoundError as e:\n    print(e.name, e)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("torch remat.torch needs PyTorch 1.13 or newer")
    assert "--system-site-packages" in done.stdout and "pip install torch" in done.stdout
