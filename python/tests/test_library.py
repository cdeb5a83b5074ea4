"""Finding libminitriton: MINITRITON_LIBRARY, the build tree recorded at
install time, the system; and what the error says when none loads."""
import os
import subprocess
import sys

import minitriton as mt


def _python(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True,
                          timeout=120)


def test_the_library_loaded():
    assert os.path.isfile(mt.library_path)
    assert mt.library_version == "0.1.0" == mt.__version__


def test_installed_from_the_repository_records_its_build_tree():
    if os.environ.get("MT_PYTHON_INSTALLED"):  # scripts/test_python.sh: the pip-installed package
        assert os.path.realpath(mt.__file__).startswith(os.path.realpath(sys.prefix))
        from minitriton import _install_info
        assert _install_info.BUILD_DIR == os.environ["MT_PYTHON_INSTALLED"]
    try:
        from minitriton import _install_info
    except ImportError:  # imported from the source tree, not installed
        return
    if _install_info.BUILD_DIR and "MINITRITON_LIBRARY" not in os.environ:
        assert mt.library_path == os.path.join(_install_info.BUILD_DIR, "libminitriton.so")


def test_explicit_library():
    r = _python("import minitriton; print(minitriton.library_path)", MINITRITON_LIBRARY=mt.library_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == mt.library_path


def test_missing_library_says_what_was_tried():
    r = _python("import minitriton", MINITRITON_LIBRARY="/nonexistent/libminitriton.so")
    assert r.returncode != 0
    assert "ImportError: minitriton: cannot find the shared library" in r.stderr
    assert "MINITRITON_LIBRARY: /nonexistent/libminitriton.so does not exist" in r.stderr


def test_context_is_shared_and_configured_once():
    c = mt.context()
    assert c and mt.context() == c
    try:
        mt.configure(num_threads=2)
    except RuntimeError as e:
        assert "already exists" in str(e)
    else:
        raise AssertionError("configure after the context exists must fail")
    r = _python("import minitriton as mt, numpy as np\n"
                "mt.configure(num_threads=1, cache_entries=-1)\n"
                "k = mt.compile('def f(x: Tensor((2,), \"float32\")):\\n    return x + x\\n')\n"
                "print(k(np.ones(2, np.float32)), mt.cache_stats()['capacity'])")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[2.", "2.]", "0"]


def test_disk_cache_hit_in_a_new_process(tmp_path):
    # configure(cache_dir=...): the first process compiles and writes the
    # entry, the second finds it (LLVM does not run: opt_ms is 0)
    code = ("import minitriton as mt, numpy as np, sys\n"
            "mt.configure(num_threads=1, cache_dir=sys.argv[1])\n"
            "k = mt.compile('def f(x: Tensor((2,), \"float32\")):\\n    return x + x\\n')\n"
            "t = k.compile_times()\n"
            "s = mt.disk_cache_stats()\n"
            "print(k(np.ones(2, np.float32)), t['disk'], t['opt_ms'] > 0, s['hits'], s['writes'],"
            " s['dir'] == sys.argv[1])")
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.split())
    assert outs[0] == ["[2.", "2.]", "2", "True", "0", "1", "True"]  # MT_DISK_MISS, written
    assert outs[1] == ["[2.", "2.]", "1", "False", "1", "0", "True"]  # MT_DISK_HIT
    assert [p.suffix for p in tmp_path.iterdir()] == [".mtc"]
    # cache_dir="" turns it off
    r = _python("import minitriton as mt\nmt.configure(cache_dir='')\n"
                "print(mt.disk_cache_stats()['dir'])")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "None"


def test_every_c_function_used_is_declared():
    # ctypes passes a pointer as a C int to a function without argtypes:
    # every mt_ function the package calls must be declared in _lib.
    import re
    from minitriton import _lib
    pkg = os.path.dirname(mt.__file__)
    used = set()
    for name in os.listdir(pkg):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), encoding="utf-8") as f:
                used |= set(re.findall(r"\b(?:py)?lib\.(mt_\w+)", f.read()))
    assert used and not used - set(_lib.FUNCS) - set(_lib.PYFUNCS)
    for name in used:
        if "pylib." + name in open(os.path.join(pkg, "jit.py"), encoding="utf-8").read():
            assert name in _lib.PYFUNCS, name


def test_a_copy_outside_the_repository_uses_the_system(tmp_path):
    # a copy of the package that knows no build tree: found through the
    # dynamic loader's search path (LD_LIBRARY_PATH), else an ImportError
    # that lists every place tried
    import shutil
    pkg = tmp_path / "minitriton"
    shutil.copytree(os.path.dirname(mt.__file__), pkg,
                    ignore=shutil.ignore_patterns("_install_info.py", "__pycache__"))
    libdir = os.path.dirname(mt.library_path)
    code = "import minitriton; print(minitriton.library_path)"
    env = {"PYTHONPATH": str(tmp_path), "MINITRITON_LIBRARY": ""}
    if os.path.exists(os.path.join(libdir, "libminitriton.so.0")):
        r = _python(code, LD_LIBRARY_PATH=libdir, **env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "libminitriton.so.0"  # by find_library or the loader
    r = _python(code, LD_LIBRARY_PATH="", **env)
    if r.returncode == 0:  # installed on this system (cmake --install): found there
        assert "minitriton" in r.stdout
        return
    assert "cannot find the shared library" in r.stderr
    for what in ('ctypes.util.find_library("minitriton")', "the dynamic loader's search path",
                 "the default prefix /usr/local/lib"):
        assert what in r.stderr, r.stderr


def test_struct_mirrors_match_the_header():
    # The ctypes mirrors of minitriton.h's structs must have the header's
    # fields in its order: a field added in C and not here makes the
    # library write past the Python-allocated struct (a crash far away).
    import re
    from minitriton import _lib
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "include", "minitriton.h"), encoding="utf-8") as f:
        header = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    mirrors = {"mt_diag": _lib.Diag, "mt_context_options": _lib.ContextOptions,
               "mt_compile_options": _lib.CompileOptions, "mt_compile_times": _lib.CompileTimes,
               "mt_cache_stats": _lib.CacheStats, "mt_device": _lib.Device}
    for cname, mirror in mirrors.items():
        m = re.search(r"typedef struct %s \{(.*?)\} %s;" % (cname, cname), header, re.S)
        assert m, cname
        fields = []
        for decl in m.group(1).split(";"):
            names = re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*(?:,|$)", decl.strip())
            fields += [n for n in names if n]
        assert fields == [f[0] for f in mirror._fields_], (cname, fields)
