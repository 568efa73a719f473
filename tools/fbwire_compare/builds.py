# SPDX-License-Identifier: MIT
"""Where the fbwire programs are: the one build lookup of the project.

Installed, they are next to the fbwire-compare command (HERE, the bin directory) and the plug-in in
HERE/../lib. In a checkout they are in the newest build*/ directory of the repository (by the
modification time of the file itself, so the build last made wins). An environment variable
overrides each (FBWIRE_PCAP, FBWIRE_REPORT, FBWIRE_CPU, FBWIRE_LINK, FBWIRE_SYSBENCH_LIB).
"""
import glob
import os

# name -> (path inside a build directory, environment override)
TOOLS = {
    "fbwire-pcap": ("tools/fbwire-pcap", "FBWIRE_PCAP"),
    "fbwire-report": ("tools/fbwire-report", "FBWIRE_REPORT"),
    "fbwire-cpu": ("tools/fbwire-cpu", "FBWIRE_CPU"),
    "fbwire-link": ("tools/fbwire-link", "FBWIRE_LINK"),
    "fbwire-bench": ("tools/fbwire-bench", "FBWIRE_BENCH"),
    "libfbwire-sysbench.so": ("driver/libfbwire-sysbench.so", "FBWIRE_SYSBENCH_LIB"),
}


def newest(repo, relpath):
    """The newest repo/build*/relpath that is a file, or None."""
    found = [p for p in glob.glob(os.path.join(repo, "build*", relpath)) if os.path.isfile(p)]
    return max(found, key=os.path.getmtime) if found else None


class Builds:
    def __init__(self, here, repo=None, env=None):
        self.here = here
        self.repo = repo if repo is not None else os.path.dirname(here)
        self.env = os.environ if env is None else env

    def find(self, name):
        """The program's path, or None when it is nowhere."""
        relpath, var = TOOLS[name]
        if self.env.get(var):
            return self.env[var]
        if name.endswith(".so"):
            installed = os.path.join(self.here, "..", "lib", name)
        else:
            installed = os.path.join(self.here, name)
        # in a checkout tools/<name> is the source directory, not the program
        if os.path.isfile(installed) and (name.endswith(".so") or os.access(installed, os.X_OK)):
            return os.path.normpath(installed)
        return newest(self.repo, relpath)

    def sysbench_launcher(self):
        """fbwire-sysbench: the launcher with the plug-in, next to us installed and in tools/."""
        return os.path.join(self.here, "fbwire-sysbench")


# Where scripts/fb-servers.sh and scripts/peer-servers.sh keep the servers' state by default: outside
# every checkout, so one set of servers serves them all and the installed command finds it too.
DEFAULT_STATE = "/var/tmp/fbwire-state"


def state_dir():
    """The servers' state directory: FBWIRE_STATE, else DEFAULT_STATE."""
    return os.environ.get("FBWIRE_STATE") or DEFAULT_STATE


def no_servers(path, script="fb-servers.sh"):
    """The error when PATH (servers.env or peers.env, written by SCRIPT) is missing: what is wrong and
    the command that starts the servers (the scripts are in the checkout, not in the package)."""
    return ("no servers registered: %s does not exist; start them as root in an fbwire checkout with "
            "`scripts/%s start` (or set FBWIRE_STATE to the state directory of running ones)" % (path, script))
