"""Parsers of the security collectors: real captures and random text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.collect import security as sc
from tests.helpers import FIXTURES
from tests.security.scenarios import public

CI_ROOT = FIXTURES / "security" / "ci-vm" / "root"
PCI = FIXTURES / "security" / "ci-vm-pci-config"


def test_status_ids_from_ci_vm() -> None:
    ids = sc.parse_status_ids((CI_ROOT / "proc/self/status").read_text())
    assert ids["Uid"] == [0, 0, 0, 0]
    assert ids["Gid"] == [0, 0, 0, 0]
    assert ids["Groups"] == []


def test_cmdline_stops_at_init_arguments() -> None:
    text = (CI_ROOT / "proc/cmdline").read_text()
    assert sc.parse_cmdline_options(text) == {}
    # Derived: the CI VM's command line with iommu=pt put before the "--".
    assert sc.parse_cmdline_options("iommu=pt " + text) == {"iommu": "pt"}
    assert sc.parse_cmdline_options(text.replace(" -- ", " -- iommu=pt ")) == {}


def test_nvidia_params_from_k8s_test_infra() -> None:
    params = sc.parse_nvidia_params(public("nvidia-params-h100-580.105.08.txt"))
    assert params["RmProfilingAdminOnly"] == "1"
    assert params["TemporaryFilePath"] == '"/var/tmp"'
    assert len(params) == 42


def test_modprobe_restrict() -> None:
    text = (
        "# options nvidia NVreg_RestrictProfilingToAdminUsers=1\n"
        "options nvidia NVreg_RestrictProfilingToAdminUsers=0 NVreg_EnableMSI=1\n"
    )
    assert sc.parse_modprobe_restrict(text) == [0]


def test_proc_mount_and_hidepid() -> None:
    opts = sc.parse_proc_mount((CI_ROOT / "proc/mounts").read_text())
    assert opts == "rw,relatime"
    assert sc.hidepid_of(opts) is None
    assert sc.hidepid_of("rw,nosuid,nodev,noexec,relatime,hidepid=invisible") == "invisible"


def test_modules_from_lsmod_excerpt() -> None:
    mods = sc.parse_modules(public("lsmod-nvidia-peermem.txt"))
    assert {"nvidia", "nvidia_peermem", "ib_uverbs"} <= mods


def test_open_module_banner() -> None:
    assert sc.is_open_kernel_module(public("nvidia-version-open-555.58.02.txt"))
    assert not sc.is_open_kernel_module(public("nvidia-version-proprietary-515.76.txt"))


def test_nodes_config() -> None:
    assert sc.parse_nodes_config("# IMEX nodes\n10.0.0.1\n\n10.0.0.2\n") == 2


def test_acs_real_configs() -> None:
    # Root read 4096 bytes of the host bridge; virtio functions expose 256.
    full = (PCI / "0000_00_00.0.config").read_bytes()
    assert sc.parse_acs(full) == ("absent", None, None)
    assert sc.parse_acs((PCI / "0000_00_01.0.config").read_bytes())[0] == "unknown"
    # Derived: an ordinary user sees only the first 64 bytes.
    assert sc.parse_acs(full[:64])[0] == "unknown"


def test_acs_derived_present() -> None:
    # Derived from the real 4096-byte host-bridge config: an ACS extended
    # capability header (id 0x000D, version 1, no next) written at 0x100.
    full = bytearray((PCI / "0000_00_00.0.config").read_bytes())
    full[0x100:0x108] = (0x0001000D).to_bytes(4, "little") + bytes([0x5F, 0x00, 0x1D, 0x00])
    assert sc.parse_acs(bytes(full)) == ("present", 0x5F, 0x1D)


def test_acs_loop_is_bounded() -> None:
    # Derived: a header whose next pointer points at itself.
    full = bytearray((PCI / "0000_00_00.0.config").read_bytes())
    full[0x100:0x104] = ((0x100 << 20) | 0x0001).to_bytes(4, "little")
    assert sc.parse_acs(bytes(full)) == ("absent", None, None)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=2000))
def test_text_parsers_are_total(text: str) -> None:
    sc.parse_status_ids(text)
    sc.parse_cmdline_options(text)
    sc.parse_nvidia_params(text)
    sc.parse_modprobe_restrict(text)
    sc.hidepid_of(sc.parse_proc_mount(text))
    sc.parse_modules(text)
    sc.parse_nodes_config(text)
    sc.is_open_kernel_module(text)


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=0, max_size=4200))
def test_acs_parser_is_total(data: bytes) -> None:
    state, _, _ = sc.parse_acs(data)
    assert state in ("present", "absent", "unknown")


@settings(max_examples=50, deadline=None)
@given(st.binary(min_size=3840, max_size=3840))
def test_acs_parser_total_on_real_prefix(tail: bytes) -> None:
    head = (PCI / "0000_00_00.0.config").read_bytes()[:256]
    sc.parse_acs(head + tail)
