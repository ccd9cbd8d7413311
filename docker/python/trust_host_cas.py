"""Trust the certificates of a CA bundle that Debian's bundle lacks (see Dockerfile).

``python trust_host_cas.py BUNDLE``: each certificate of BUNDLE not already in
/etc/ssl/certs/ca-certificates.crt goes to /usr/local/share/ca-certificates/, then
update-ca-certificates rebuilds the bundle. A missing BUNDLE adds nothing.
"""

import pathlib
import re
import subprocess
import sys

PEM = re.compile(r"-----BEGIN CERTIFICATE-----\s.*?-----END CERTIFICATE-----", re.DOTALL)


def certificates(text: str) -> set[str]:
    return {"".join(cert.split()) for cert in PEM.findall(text)}


def main(bundle: pathlib.Path) -> None:
    if not bundle.is_file():
        print(f"{bundle}: absent, no CA added")
        return
    known = certificates(pathlib.Path("/etc/ssl/certs/ca-certificates.crt").read_text())
    target = pathlib.Path("/usr/local/share/ca-certificates")
    target.mkdir(parents=True, exist_ok=True)
    added = 0
    for cert in PEM.findall(bundle.read_text()):
        if "".join(cert.split()) not in known:
            added += 1
            (target / f"host-{added}.crt").write_text(cert + "\n")
    print(f"{bundle}: {added} CA(s) added")
    if added:
        subprocess.run(["update-ca-certificates"], check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
