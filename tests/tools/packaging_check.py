"""Packaging checks (tests/packaging.cmake).

  packaging_check.py docs      the man page and the bash completion cover every
                               command and every option that `CMD --help` shows
  packaging_check.py install CMAKE CC
                               a staged `cmake --install` (DESTDIR) has every file, and a
                               program built through `pkg-config --static dctk` reads a dataset
  packaging_check.py symbols CMAKE
                               every static library of a staged install exports only dctk_
                               symbols, and every DCTK_API declaration of its headers
  packaging_check.py codecs_only CMAKE CC
                               a program built with `pkg-config --cflags --libs dctk_codecs`
                               alone needs no netCDF, eccodes or cairo and round-trips a chunk
  packaging_check.py stable_api CMAKE CC
                               the stable headers (dctk/dctk.h) compile without DCTK_STATIC_LINKING_ONLY
                               and without jansson, hide the rest, and a program on them alone
                               round-trips a real field through codecs, compress and a store
  packaging_check.py recipes   check-fresh runs the README's "Two commands" block as written and
                               the Dockerfile's RUN lines; the Dockerfile installs through the
                               same script and targets; the Spack recipe's CMake options exist

Environment (dctk_script_test): DCTK, DCTK_BUILD, DCTK_SRC, DCTK_NCARG."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

DCTK = os.environ["DCTK"]
BUILD = os.environ["DCTK_BUILD"]


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=50, **kw)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def commands():
    out = run([DCTK, "--help"]).stdout
    body = out.split("commands:\n", 1)[1]
    names = []
    for line in body.splitlines():
        m = re.match(r"^  (\S+)\s+\S", line)
        if not m:
            break
        names.append(m.group(1))
    if not names:
        sys.exit("FAIL: no commands in dc_toolkit --help")
    return names


def options(cmd):
    out = run([DCTK, cmd, "--help"]).stdout
    opts = []
    # "options:" heads the list; a command without options shows only the --help line
    tail = out.split("\noptions:\n", 1)[1] if "\noptions:\n" in out else out.splitlines()[-1]
    for line in tail.splitlines():
        m = re.match(r"^  (-\S+)", line)
        if m:
            opts += m.group(1).split("/")
    if "--help" not in opts:
        sys.exit(f"FAIL: {cmd} --help lists no --help")
    return opts


def unroff(text):
    text = re.sub(r"\\f[BIRP]", "", text)
    return text.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")


def docs():
    man = run([DCTK, "--man"]).stdout
    comp = run([DCTK, "--bash-completion"]).stdout
    # the files the build generated are the program's current output
    for name, want in (("dc_toolkit.1", man), ("dc_toolkit.bash", comp)):
        with open(os.path.join(BUILD, name)) as f:
            if f.read() != want:
                sys.exit(f"FAIL: {BUILD}/{name} differs from the program's output")

    plain = unroff(man)
    sections = re.split(r'^\.SS "([^"]+)"\n', plain, flags=re.M)
    per_cmd = dict(zip(sections[1::2], sections[2::2]))
    for s in (".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH EXIT STATUS", ".SH FILES", ".SH SEE ALSO"):
        if s not in man:
            sys.exit(f"FAIL: man page has no {s}")
    if "l1_error_thresholds.csv" not in plain:
        sys.exit("FAIL: FILES does not name the threshold table")
    cases = dict(re.findall(r'^\s+(\S+)\) opts="([^"]*)"', comp, flags=re.M))
    first = re.search(r'compgen -W "([^"$]*)"', comp).group(1).split()

    n = 0
    for cmd in commands():
        if cmd not in per_cmd:
            sys.exit(f"FAIL: man page has no subsection for {cmd}")
        if cmd not in first:
            sys.exit(f"FAIL: completion does not offer the command {cmd}")
        for opt in options(cmd):
            n += 1
            if not re.search(re.escape(opt) + r"(?![\w-])", per_cmd[cmd]):
                sys.exit(f"FAIL: man page, {cmd}: option {opt} missing")
            if opt not in cases.get(cmd, "").split():
                sys.exit(f"FAIL: completion, {cmd}: option {opt} missing")
    print(f"{len(per_cmd)} commands, {n} options in both the man page and the completion")

    # the man page renders without warnings
    with tempfile.NamedTemporaryFile("w", suffix=".1") as f:
        f.write(man)
        f.flush()
        if shutil.which("groff"):
            p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", f.name], capture_output=True, text=True)
            tool = "groff"
        elif shutil.which("mandoc"):
            p = subprocess.run(["mandoc", "-T", "lint", "-W", "warning", f.name], capture_output=True, text=True)
            tool = "mandoc"
        else:
            p, tool = None, None
            print("neither groff nor mandoc: rendering not checked")
        if p is not None:
            if p.returncode != 0 or p.stderr.strip() or (tool == "mandoc" and p.stdout.strip()):
                sys.exit(f"FAIL: {tool} warns:\n{p.stdout}{p.stderr}")
            print(f"{tool}: no warnings")

    # the completion script is valid bash and completes
    with tempfile.NamedTemporaryFile("w", suffix=".bash") as f:
        f.write(comp)
        f.flush()
        probe = ('source "$1"; COMP_WORDS=(dc_toolkit compress_w); COMP_CWORD=1; _dc_toolkit; echo "${COMPREPLY[*]}";'
                 'COMP_WORDS=(dc_toolkit from_zarr_to_netcdf --o); COMP_CWORD=2; _dc_toolkit; echo "${COMPREPLY[*]}";'
                 'COMP_WORDS=(dc_toolkit inspect_dataset da); COMP_CWORD=2; _dc_toolkit; echo "${#COMPREPLY[@]}"')
        out = run(["bash", "-c", probe, "bash", f.name]).stdout.splitlines()
        if out != ["compress_with_optimal", "--out", "0"]:
            sys.exit(f"FAIL: completion gives {out}")
    print("completion: commands, options, file names (left to -o default)")


def install(cmake, cc):
    stage = tempfile.mkdtemp(prefix="dctk-install-")
    try:
        env = dict(os.environ, DESTDIR=stage)
        run([cmake, "--install", BUILD, "--prefix", "/usr/local"], env=env)
        root = os.path.join(stage, "usr/local")
        want = ["bin/dc_toolkit", "lib/libdctk.a", "lib/pkgconfig/dctk.pc", "share/man/man1/dc_toolkit.1",
                "share/bash-completion/completions/dc_toolkit", "include/dctk/dataset.h"]
        want += ["include/dctk/" + h for h in os.listdir(os.path.join(os.environ["DCTK_SRC"], "include/dctk"))]
        for w in want:
            if not os.path.isfile(os.path.join(root, w)):
                sys.exit(f"FAIL: the install has no {w}")
        print(f"install: {len(want)} files present")

        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(root, "lib/pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "--static", "dctk"], env=pc_env).stdout.split()
        if not any(f.startswith("-I") and f.startswith("-I" + stage) for f in flags):
            sys.exit(f"FAIL: pkg-config does not point into the staged tree: {flags}")
        exe = os.path.join(stage, "pkgconfig_demo")
        src = os.path.join(os.environ["DCTK_SRC"], "tests/tools/pkgconfig_demo.c")
        run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, src] + flags)
        data = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf/meccatemp.cdf")
        out = run([exe, data]).stdout
        names = [line.split()[0] for line in out.splitlines()[1:]]
        if "t" not in names:
            sys.exit(f"FAIL: the demo does not list t:\n{out}")
        print(out, end="")
        print("pkg-config --static dctk: built and ran")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def staged_install(cmake):
    """cmake --install of the build into a fresh temporary prefix; returns (stage, prefix)."""
    stage = tempfile.mkdtemp(prefix="dctk-libs-")
    run([cmake, "--install", BUILD, "--prefix", os.path.join(stage, "prefix")])
    return stage, os.path.join(stage, "prefix")


def exported(archive):
    """The global symbols an archive defines (nm -g --defined-only)."""
    out = run(["nm", "-g", "--defined-only", archive]).stdout
    return {line.split()[2] for line in out.splitlines() if len(line.split()) == 3}


def declared_api(include_dir, skip):
    """Names the installed headers mark DCTK_API (functions and variables)."""
    names = {}
    for h in sorted(os.listdir(include_dir)):
        if h in skip:
            continue
        with open(os.path.join(include_dir, h)) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        for decl in re.findall(r"^DCTK_API\b([^;]*?)(?:\(|\[|;)", text, re.M):
            names[re.findall(r"\w+", decl)[-1]] = h
    return names


def symbols(cmake):
    """Every installed static library exports dctk_ symbols only, and every
    DCTK_API declaration of the installed headers is exported by one of them."""
    stage, prefix = staged_install(cmake)
    try:
        libdir = os.path.join(prefix, "lib")
        archives = sorted(f for f in os.listdir(libdir) if f.endswith(".a"))
        if not {"libdctk_codecs.a", "libdctk.a", "libdctk_report.a", "libdctk_par.a"} <= set(archives):
            sys.exit(f"FAIL: the install has the libraries {archives}")
        everything = set()
        for a in archives:
            syms = exported(os.path.join(libdir, a))
            bad = sorted(x for x in syms if not x.startswith("dctk_"))
            if bad:
                sys.exit(f"FAIL: {a} exports {len(bad)} symbols without the dctk_ prefix: {' '.join(bad)}")
            print(f"{a}: {len(syms)} symbols, all dctk_")
            everything |= syms
        skip = set() if "libdctk_web.a" in archives else {"web.h"}
        api = declared_api(os.path.join(prefix, "include/dctk"), skip)
        missing = sorted(f"{n} ({h})" for n, h in api.items() if n not in everything)
        if missing or len(api) < 100:
            sys.exit(f"FAIL: of {len(api)} DCTK_API declarations, exported by no library: {' '.join(missing)}")
        print(f"all {len(api)} DCTK_API declarations are exported")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def codecs_only(cmake, cc):
    """A program built with `pkg-config --cflags --libs dctk_codecs` alone links
    without netCDF, eccodes or cairo and round-trips a chunk of real bytes."""
    stage, prefix = staged_install(cmake)
    try:
        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
        flags = run(["pkg-config", "--cflags", "--libs", "dctk_codecs"], env=pc_env).stdout.split()
        bad = [f for f in flags if f == "-ldctk" or any(w in f for w in ("netcdf", "eccodes", "cairo", "microhttpd"))]
        if bad or "-ldctk_codecs" not in flags:
            sys.exit(f"FAIL: pkg-config dctk_codecs gives {flags}")
        exe = os.path.join(stage, "codecs_only_demo")
        src = os.path.join(os.environ["DCTK_SRC"], "tests/tools/codecs_only_demo.c")
        run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, src] + flags)
        needed = run(["readelf", "-d", exe]).stdout
        for lib in ("libnetcdf", "libeccodes", "libcairo"):
            if lib in needed:
                sys.exit(f"FAIL: the codecs-only program needs {lib}")
        data = os.path.join(os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data"), "cdf/meccatemp.cdf")
        out = run([exe, data]).stdout
        print(out, end="")
        m = re.search(r"round trip: (\d+) -> (\d+) bytes, identical", out)
        if not m or int(m.group(1)) != os.path.getsize(data) or not int(m.group(2)) < int(m.group(1)):
            sys.exit(f"FAIL: no smaller identical round trip of {data}")
        print("pkg-config dctk_codecs alone: built (no netCDF, eccodes, cairo) and ran")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


STABLE_HEADERS = ["api.h", "status.h", "version.h", "array.h", "buf.h", "alloc.h", "codec.h", "zarr.h", "compress.h",
                  "dctk.h"]


def compile_snippet(cc, code, flags, stage):
    """Compile code (no link); the completed process."""
    src = os.path.join(stage, "snippet.c")
    with open(src, "w") as f:
        f.write(code)
    return subprocess.run([cc, "-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-c", "-o",
                           os.path.join(stage, "snippet.o"), src] + flags, capture_output=True, text=True, timeout=50)


def stable_api(cmake, cc):
    """The installed stable headers need neither DCTK_STATIC_LINKING_ONLY nor
    jansson, hide what is not stable, and a program on them alone (tests/tools/
    stable_api_demo.c) round-trips a real field."""
    import numpy as np
    import netCDF4
    from numcodecs import BitRound

    stage, prefix = staged_install(cmake)
    try:
        inc = os.path.join(prefix, "include")
        # a jansson.h found first that stops any build including it
        poison = os.path.join(stage, "poison")
        os.makedirs(poison)
        with open(os.path.join(poison, "jansson.h"), "w") as f:
            f.write('#error "a stable dctk header included jansson.h"\n')
        stable = ["-I" + poison, "-I" + inc]
        for h in STABLE_HEADERS:
            p = compile_snippet(cc, f"#include <dctk/{h}>\nint dctk_demo_unit;\n", stable, stage)
            if p.returncode != 0:
                sys.exit(f"FAIL: dctk/{h} does not compile alone without DCTK_STATIC_LINKING_ONLY and jansson:\n"
                         f"{p.stderr}")
        unstable = sorted(set(os.listdir(os.path.join(inc, "dctk"))) - set(STABLE_HEADERS))
        for h in unstable:
            p = compile_snippet(cc, f"#include <dctk/{h}>\n", stable, stage)
            if p.returncode == 0 or "not part of the stable API" not in p.stderr:
                sys.exit(f"FAIL: dctk/{h} compiles without DCTK_STATIC_LINKING_ONLY:\n{p.stderr}")
        # declarations behind the macro: hidden without it, there with it (and jansson's real header)
        use = ("#include <dctk/dctk.h>\n"
               "int main(void) {\n"
               "    dctk_codec *c = 0;\n"
               "    dctk_pipeline *p = 0;\n"
               "    dctk_set_detail(\"%d\", 1);\n"
               "    return (int)dctk_codec_from_json(0, &c) + (int)dctk_pipeline_from_json(0, &p) + p->n +\n"
               "           (int)dctk_load_f64(DCTK_FLOAT32, 0, 0);\n"
               "}\n")
        p = compile_snippet(cc, use, stable, stage)
        hidden = ("dctk_codec_from_json", "dctk_pipeline_from_json", "dctk_pipeline", "dctk_set_detail",
                  "dctk_load_f64")
        if p.returncode == 0 or not all(w in p.stderr for w in hidden):
            sys.exit(f"FAIL: without the macro the json_t forms or the pipeline's struct are declared:\n{p.stderr}")
        p = compile_snippet(cc, "#define DCTK_STATIC_LINKING_ONLY\n" + use, ["-I" + inc], stage)
        if p.returncode != 0:
            sys.exit(f"FAIL: with DCTK_STATIC_LINKING_ONLY the same program does not compile:\n{p.stderr}")
        print(f"{len(STABLE_HEADERS)} stable headers compile alone without the macro or jansson; "
              f"{len(unstable)} others stop; the json_t forms appear only with the macro")

        # the field, as netCDF4 reads it
        root = os.environ.get("DCTK_NCARG", "/usr/share/ncarg/data")
        data = os.path.join(root, "cdf/meccatemp.cdf")
        with netCDF4.Dataset(data) as d:
            v = d.variables["t"]
            v.set_auto_maskandscale(False)
            ref = np.ascontiguousarray(v[...], dtype="<f4")
        if ref.ndim != 3 or np.isnan(ref).any():
            sys.exit(f"FAIL: meccatemp t is {ref.shape} with NaN {np.isnan(ref).any()}")
        ref_path = os.path.join(stage, "t.f32")
        ref.tofile(ref_path)

        pc_env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
        libs = run(["pkg-config", "--libs", "--static", "dctk"], env=pc_env).stdout.split()
        exe = os.path.join(stage, "stable_api_demo")
        src = os.path.join(os.environ["DCTK_SRC"], "tests/tools/stable_api_demo.c")
        run([cc, "-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror", "-o", exe, src] + stable + libs)
        out_dir = os.path.join(stage, "out")
        os.makedirs(out_dir)
        out = run([exe, data, "t", ref_path] + [str(n) for n in ref.shape] + [out_dir]).stdout
        print(out, end="")
        for want in ("codec ", "pipeline bytes+shuffle+zstd", "meccatemp.zarr/t:", "swept ", "own.zarr/t:",
                     "unknown codec"):
            if want not in out:
                sys.exit(f"FAIL: the demo did not report {want!r}")
        # the lossy pipeline's values are numcodecs' BitRound(10)'s, bit for bit
        got = np.fromfile(os.path.join(out_dir, "bitround.f32"), dtype="<f4").reshape(ref.shape)
        # (numcodecs 0.11 rounds the array it is given in place: a copy)
        want = np.asarray(BitRound(keepbits=10).encode(ref.copy())).view("<f4").reshape(ref.shape)
        if got.view("<u4").tolist() != want.view("<u4").tolist() or np.array_equal(got, ref):
            sys.exit("FAIL: the bitround pipeline does not give numcodecs' BitRound(10) values")
        print("bitround(10) through the stable pipeline: numcodecs' BitRound values, bit for bit")
        # the library's sweep (dctk_compress_run with a budget) keeps the budget on the whole field, and
        # picks the combo the command picks with the same budget
        got = np.fromfile(os.path.join(out_dir, "swept.f32"), dtype="<f4").reshape(ref.shape).astype(np.float64)
        x = ref.astype(np.float64)
        l1 = np.abs(got - x).sum() / np.abs(x).sum()
        if not 0 < l1 <= 1e-3:
            sys.exit(f"FAIL: the swept field's relative L1 error is {l1:.3e}, not within (0, 1e-3]")
        cli_dir = os.path.join(stage, "cli")
        run([DCTK, "compress", data, cli_dir, "--vars", "t", "--l1-threshold", "1e-3", "--threads-per-rank", "2"])
        import json
        with open(os.path.join(cli_dir, "best_t.json")) as f:
            cli = json.load(f)["codecs"]
        with open(os.path.join(out_dir, "swept", "best_t.json")) as f:
            lib = json.load(f)["codecs"]
        if lib != cli:
            sys.exit(f"FAIL: dctk_compress_run chose {lib}, dc_toolkit compress {cli}")
        print(f"dctk_compress_run's sweep: relative L1 {l1:.3e} (numpy) within 1e-3, the command's winner")
        print("stable API alone: built without DCTK_STATIC_LINKING_ONLY and jansson, and ran")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def recipes():
    src = os.environ["DCTK_SRC"]

    def read(name):
        with open(os.path.join(src, name)) as f:
            return f.read()

    # the README's commands, read here independently of check-fresh's awk
    block = re.search(r"^## Two commands\n.*?^```sh\n(.*?)^```", read("README.md"), re.S | re.M)
    if not block:
        sys.exit("FAIL: README.md has no ```sh block under '## Two commands'")
    readme = [c for c in (re.sub(r"\s*#.*", "", line) for line in block.group(1).splitlines()) if c]
    for want in ("make demo", "make check"):
        if want not in readme:
            sys.exit(f"FAIL: the README's block lacks {want!r}: {readme}")
    plan = run(["sh", os.path.join(src, "scripts/check-fresh.sh"), "--plan"]).stdout.splitlines()
    i = plan.index("check-fresh: README commands:")
    if [line.strip() for line in plan[i + 1:i + 1 + len(readme)]] != readme:
        sys.exit(f"FAIL: check-fresh would run other commands than the README's {readme}:\n" + "\n".join(plan))
    print("check-fresh runs the README's commands:", " ; ".join(readme))

    docker = read("Dockerfile")
    runs = re.findall(r"^RUN (.*)$", docker, re.M)
    if not re.search(r"^FROM debian:12$", docker, re.M) or not re.search(r'^ENTRYPOINT \["dc_toolkit"\]$', docker, re.M):
        sys.exit("FAIL: the Dockerfile is not FROM debian:12 with ENTRYPOINT [\"dc_toolkit\"]")
    joined = " && ".join(runs)
    for want in ("sh scripts/install-deps.sh", "make build", "make install"):
        if want not in joined:
            sys.exit(f"FAIL: the Dockerfile's RUN lines lack {want!r} (one way to install): {runs}")
    if not all(f"    {r}" in plan for r in runs):
        sys.exit(f"FAIL: check-fresh would not run the Dockerfile's RUN lines {runs}:\n" + "\n".join(plan))
    ignored = read(".dockerignore").split()
    for want in (".git", "build*", "tests/js/node_modules"):
        if want not in ignored:
            sys.exit(f"FAIL: .dockerignore does not leave out {want}")
    print("Dockerfile: debian:12, RUN", joined, "(run by check-fresh)")

    recipe = read("packaging/spack/packages/dc-toolkit/package.py")
    options = set(re.findall(r"^option\((\w+)", read("CMakeLists.txt"), re.M))
    used = re.findall(r'self\.define(?:_from_variant)?\("(\w+)"', recipe)
    variants = set(re.findall(r'^\s*variant\("(\w+)"', recipe, re.M))
    if not used or not set(used) <= options or not {"mpi", "web"} <= variants:
        sys.exit(f"FAIL: the Spack recipe sets {used} (options: {sorted(options)}), variants {sorted(variants)}")
    if not os.path.isfile(os.path.join(src, "packaging/spack/repo.yaml")):
        sys.exit("FAIL: packaging/spack/repo.yaml is missing (spack repo add packaging/spack)")
    print("Spack recipe: variants", sorted(variants), "set CMake options", used)


if __name__ == "__main__":
    if sys.argv[1:2] == ["recipes"]:
        recipes()
    elif sys.argv[1:2] == ["docs"]:
        docs()
    elif sys.argv[1:2] == ["install"] and len(sys.argv) == 4:
        install(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["symbols"] and len(sys.argv) == 3:
        symbols(sys.argv[2])
    elif sys.argv[1:2] == ["stable_api"] and len(sys.argv) == 4:
        stable_api(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["codecs_only"] and len(sys.argv) == 4:
        codecs_only(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
