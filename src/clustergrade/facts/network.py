"""Facts: InfiniBand / RoCE adapters as sysfs shows them.

Values are kept as the kernel wrote them (``state_raw``, ``rate_raw``) next to
their parsed form, so a snapshot read back later can be re-judged even when a
parser improves.
"""

from __future__ import annotations

from pydantic import Field

from clustergrade.facts.base import FactModel

#: Bit 15 of a P_Key: set for a full member, clear for a limited one.
PKEY_FULL_BIT = 0x8000
#: The low 15 bits of a P_Key name the partition; 0x7fff is the default one.
PKEY_PARTITION_MASK = 0x7FFF
DEFAULT_PARTITION = 0x7FFF


class IbPort(FactModel):
    """One port of an HCA: /sys/class/infiniband/<hca>/ports/<n>/."""

    port: int
    state_raw: str | None = None
    #: The logical state's name ("ACTIVE", "INIT", "DOWN") and number.
    state: str | None = None
    state_code: int | None = None
    phys_state_raw: str | None = None
    #: The physical state's name ("LinkUp", "Polling", "Disabled") and number.
    phys_state: str | None = None
    phys_state_code: int | None = None
    rate_raw: str | None = None
    rate_gbps: float | None = None
    #: Lane width ("4X") and speed generation ("NDR"), when the kernel names them.
    width: str | None = None
    speed: str | None = None
    #: "InfiniBand" or "Ethernet" (RoCE).
    link_layer: str | None = None
    lid: str | None = None
    sm_lid: str | None = None
    #: Non-zero P_Key table entries as lower-case hex ("0x7fff"), in table
    #: order; None when the table could not be listed.
    pkeys: list[str] | None = None
    pkey_table_size: int | None = None
    gid_table_size: int | None = None
    #: Raw counter values; None for a counter the port reports as "N/A".
    counters: dict[str, int | None] = Field(default_factory=dict)
    hw_counters: dict[str, int] = Field(default_factory=dict)


class IbDevice(FactModel):
    """One HCA: /sys/class/infiniband/<hca>/."""

    name: str
    fw_ver: str | None = None
    board_id: str | None = None
    hca_type: str | None = None
    node_guid: str | None = None
    node_desc: str | None = None
    #: The PCI address behind the ``device`` link ("0000:17:00.0").
    pci_address: str | None = None
    #: True when the device is an SR-IOV virtual function (``device/physfn``
    #: exists); None when that could not be found out.
    is_vf: bool | None = None
    sriov_numvfs: int | None = None
    netdevs: list[str] = Field(default_factory=list)
    ports: list[IbPort] = Field(default_factory=list)


class DevNode(FactModel):
    """A character device under /dev/infiniband as the audit's user sees it."""

    path: str
    exists: bool
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    #: Whether the user that ran the audit may open it for reading / writing.
    readable: bool = False
    writable: bool = False


class InfinibandFacts(FactModel):
    """Every RDMA device on the node; ``present`` is False when there is none."""

    present: bool = False
    devices: list[IbDevice] = Field(default_factory=list)
    umad: list[DevNode] = Field(default_factory=list)
    issm: list[DevNode] = Field(default_factory=list)
    #: Whether /sys/class/infiniband_verbs exists (the uverbs module is loaded).
    verbs_present: bool | None = None


def pkey_value(text: str) -> int | None:
    """A P_Key string as stored in the facts, as an int (None when malformed)."""
    try:
        value = int(text, 16)
    except ValueError:
        return None
    return value if 0 <= value <= 0xFFFF else None
