"""A throwaway certificate authority for HTTPS on 127.0.0.1: made at start, trusted only by whom it is given to."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ._tempdirs import LabTempDir

__all__ = ["LocalCA"]

_LIFETIME = datetime.timedelta(days=1)
"""Long enough for a classroom day; a certificate left behind is useless tomorrow."""


class LocalCA:
    """A certificate authority that exists for one run (notebook 09): its key never leaves this process's temp folder,
    and `ca_file`, its certificate, is what a client is told to trust instead of the system's authorities; a
    server's certificate for 127.0.0.1 comes from `issue`. No verification is switched off anywhere."""

    def __init__(self) -> None:
        self.folder = LabTempDir("local-ca")
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "labkit throwaway CA")])
        self._name = name
        self._certificate = (
            _builder(name, name, self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_usage(certificate_sign=True), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.ca_file = self.folder.path / "ca.pem"
        self.ca_file.write_bytes(self._certificate.public_bytes(serialization.Encoding.PEM))

    def issue(self, name: str) -> tuple[Path, Path]:
        """A certificate for `127.0.0.1` (and `localhost`) signed by this authority, and its key: two PEM files
        named after `name`, the key readable by this user only."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        ca_key_id = x509.SubjectKeyIdentifier.from_public_key(self._key.public_key())
        certificate = (
            _builder(subject, self._name, key.public_key())
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(certificate_sign=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_key_id), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        cert_file, key_file = self.folder.path / f"{name}.pem", self.folder.path / f"{name}.key"
        cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        key_file.touch(mode=0o600)
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return cert_file, key_file

    def remove(self) -> None:
        """Delete the authority's files now (its key with them)."""
        self.folder.remove()


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _LIFETIME)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _usage(*, certificate_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=certificate_sign,
        crl_sign=certificate_sign,
        encipher_only=False,
        decipher_only=False,
    )
