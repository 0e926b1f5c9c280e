"""mcpref/examples/authorization_server under a real uvicorn: each rule of the code grant refuses what it should.

The suite's own checks of the happy path are in tests/conformance/test_authorization_conformance.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import KeySet

from mcpref.examples import authorization_server
from mcpref.examples.authorization_server import RegisteredClient, create_app
from mcpref.examples.authorization_server import metadata_documents as metadata_documents_module
from mcpref.examples.authorization_server.metadata_documents import MetadataDocuments
from mcpref.examples.secure_server.demo import MAX_ORIGINS
from tests.conftest import running

REDIRECT = "http://127.0.0.1:1/callback"
RESOURCE = "http://127.0.0.1:8000/secure/mcp"
VERIFIER = "v" * 50


class Deferred:
    """An ASGI app made once the server's URL (its issuer) is known."""

    app: Any = None
    base: str = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


SERVERS: dict[str, Any] = {}


def server_of(issuer: str) -> Any:
    """The `AuthorizationServer` behind the `issuer` fixture (its codes and refresh tokens)."""
    return SERVERS[issuer]


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    deferred = Deferred()
    with running(deferred) as base:
        deferred.app = create_app(
            base,
            clients=[RegisteredClient("app", [REDIRECT]), RegisteredClient("backend", [REDIRECT], "s3cret")],
            auto_approve="alice",
            resources=[RESOURCE, "http://127.0.0.1:8000/other/mcp"],
        )
        SERVERS[base] = deferred.app.state.server
        yield base


def authorize(issuer: str, **overrides: str) -> dict[str, list[str]]:
    """The query of the redirect back to the client (the server auto-approves as alice)."""
    query = {
        "response_type": "code",
        "client_id": "app",
        "redirect_uri": REDIRECT,
        "state": "xyz",
        "code_challenge": create_s256_code_challenge(VERIFIER),
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "scope": "mcp:tools",
        **overrides,
    }
    response = httpx.get(f"{issuer}/authorize?{urlencode({k: v for k, v in query.items() if v})}")
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(overrides.get("redirect_uri", REDIRECT) + "?")
    return parse_qs(urlsplit(location).query)


def token(issuer: str, **form: str) -> httpx.Response:
    return httpx.post(f"{issuer}/token", data=form)


def exchange(issuer: str, code: str, **overrides: str) -> httpx.Response:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "app"}
    return token(issuer, **{"code_verifier": VERIFIER, "resource": RESOURCE, **form, **overrides})


def test_the_token_is_for_the_resource_and_the_user(issuer: str) -> None:
    answer = authorize(issuer)
    assert answer["iss"] == [issuer] and answer["state"] == ["xyz"]
    response = exchange(issuer, answer["code"][0])
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    body = response.json()
    keys = KeySet.import_key_set(httpx.get(f"{issuer}/jwks").json())
    claims = jwt.decode(body["access_token"], keys).claims
    assert (claims["iss"], claims["sub"], claims["aud"], claims["scope"]) == (issuer, "alice", RESOURCE, "mcp:tools")
    assert 0 < claims["exp"] - claims["iat"] <= 3600, "access tokens are short-lived"
    assert body["token_type"] == "Bearer" and body["refresh_token"]


def test_a_wrong_pkce_verifier_is_refused(issuer: str) -> None:
    response = exchange(issuer, authorize(issuer)["code"][0], code_verifier="w" * 50)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


def test_a_code_works_once(issuer: str) -> None:
    code = authorize(issuer)["code"][0]
    assert exchange(issuer, code).status_code == 200
    assert exchange(issuer, code).json()["error"] == "invalid_grant"


def test_the_code_serves_only_its_resource(issuer: str) -> None:
    response = exchange(issuer, authorize(issuer)["code"][0], resource="http://127.0.0.1:8000/other/mcp")
    assert response.json()["error"] == "invalid_target"


def test_plain_pkce_and_no_resource_are_refused_with_iss(issuer: str) -> None:
    answer = authorize(issuer, code_challenge_method="plain", code_challenge=VERIFIER)
    assert (answer["error"], answer["iss"]) == (["invalid_request"], [issuer])
    assert authorize(issuer, resource="")["error"] == ["invalid_target"]
    assert authorize(issuer, resource="https://evil.example/mcp")["error"] == ["invalid_target"]


def test_an_unregistered_redirect_uri_gets_no_redirect(issuer: str) -> None:
    query = {"response_type": "code", "client_id": "app", "redirect_uri": "https://evil.example/cb"}
    response = httpx.get(f"{issuer}/authorize?{urlencode(query)}")
    assert response.status_code == 400 and "location" not in response.headers


def test_a_loopback_redirect_may_use_any_port_and_nothing_else_varies(issuer: str) -> None:
    assert "code" in authorize(issuer, redirect_uri="http://127.0.0.1:45678/callback")
    for other in ("http://127.0.0.1:45678/elsewhere", "http://localhost:1/callback", "https://127.0.0.1:1/callback"):
        query = {"response_type": "code", "client_id": "app", "redirect_uri": other}
        assert httpx.get(f"{issuer}/authorize?{urlencode(query)}").status_code == 400


def test_a_loopback_redirect_registered_without_a_port_takes_any_port() -> None:
    """RFC 8252 §7.3, as the docs' client is registered: the port is the one the OS gave the listener."""
    deferred = Deferred()
    with running(deferred) as base:
        deferred.app = create_app(
            base, clients=[RegisteredClient("native", ["http://127.0.0.1/callback"])], auto_approve="alice"
        )
        for port in (1, 33418, 54321):
            sent = f"http://127.0.0.1:{port}/callback"
            assert "code" in authorize(base, client_id="native", redirect_uri=sent)
        query = {"response_type": "code", "client_id": "native", "redirect_uri": "http://127.0.0.1:1/other"}
        assert httpx.get(f"{base}/authorize?{urlencode(query)}").status_code == 400


@pytest.mark.parametrize("uri", [REDIRECT + "#frag", REDIRECT + "#", "http://127.0.0.1:45678/callback#x"])
def test_a_redirect_uri_with_a_fragment_gets_no_redirect(issuer: str, uri: str) -> None:
    """RFC 6749 §3.1.2: a redirection URI has no fragment (issue 25: the code went after `#`)."""
    query = {"response_type": "code", "client_id": "app", "redirect_uri": uri, "resource": RESOURCE}
    response = httpx.get(f"{issuer}/authorize?{urlencode({**query, 'code_challenge': 'c' * 43})}")
    assert response.status_code == 400 and "location" not in response.headers


def raw_post(issuer: str, path: str, head: str, body: bytes = b"") -> str:
    """The status line and headers the server answers to a POST whose head is `head` (and whose
    body, declared there, may never be sent at all)."""
    address = urlsplit(issuer)
    with socket.create_connection((address.hostname, address.port), timeout=5) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {address.netloc}\r\n{head}\r\n".encode() + body)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer.decode("latin-1")


@pytest.mark.parametrize("path", ["/token", "/authorize/decision"])
def test_a_form_endpoint_reads_a_small_urlencoded_form_only(issuer: str, path: str) -> None:
    """Issue 25: both took multipart bodies of any size, spooled to disk. A 200 MB multipart body
    is refused from its head, before a byte of it is read; so is a urlencoded one too large."""
    mount = urlsplit(issuer).path
    multipart = "Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 200000000\r\n"
    assert raw_post(issuer, mount + path, multipart).startswith("HTTP/1.1 415 ")
    urlencoded = "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 200000000\r\n"
    assert raw_post(issuer, mount + path, urlencoded).startswith("HTTP/1.1 413 ")
    chunked = "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n"
    body = b"4000\r\n" + b"a" * 0x4000 + b"\r\n" + b"10\r\n" + b"b" * 16 + b"\r\n0\r\n\r\n"
    assert raw_post(issuer, mount + path, chunked, body).startswith("HTTP/1.1 413 ")


def test_the_token_endpoint_refuses_a_form_it_cannot_read_plainly(issuer: str) -> None:
    sent = {"grant_type": "refresh_token", "refresh_token": "r", "client_id": "app"}
    multipart = httpx.post(f"{issuer}/token", data=sent, files={"f": b"x"})
    assert (multipart.status_code, multipart.json()["error"]) == (415, "invalid_request")
    twice = httpx.post(
        f"{issuer}/token",
        content=b"client_id=app&client_id=backend&grant_type=refresh_token",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert (twice.status_code, twice.json()["error_description"]) == (400, "client_id is sent twice")
    many = "&".join(f"f{n}=1" for n in range(40)).encode()
    crowded = httpx.post(f"{issuer}/token", content=many, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert crowded.status_code == 400


def test_a_flood_of_sign_ins_pushes_out_no_code_nor_refresh_token(issuer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_PENDING live entries the new one is refused: a code's authorization response says
    `temporarily_unavailable`, a token response comes without a refresh token. Before, the oldest
    went: anyone could log everyone out."""
    server = server_of(issuer)
    server.codes.clear()
    server.refresh_tokens.clear()
    monkeypatch.setattr(authorization_server, "MAX_PENDING", 3)
    codes = [authorize(issuer)["code"][0] for _ in range(3)]
    assert authorize(issuer)["error"] == ["temporarily_unavailable"]
    refresh_tokens = [exchange(issuer, code).json().get("refresh_token") for code in codes]
    assert all(refresh_tokens)  # each code still worked
    for _ in range(2):
        assert "refresh_token" not in exchange(issuer, authorize(issuer)["code"][0]).json()
    form = {"grant_type": "refresh_token", "client_id": "app", "resource": RESOURCE}
    assert token(issuer, refresh_token=refresh_tokens[0], **form).status_code == 200  # rotated in place
    server.codes.clear()
    server.refresh_tokens.clear()


def test_refresh_tokens_rotate(issuer: str) -> None:
    first = exchange(issuer, authorize(issuer)["code"][0]).json()["refresh_token"]
    form = {"grant_type": "refresh_token", "client_id": "app", "resource": RESOURCE}
    renewed = token(issuer, refresh_token=first, **form)
    assert renewed.status_code == 200 and renewed.json()["refresh_token"] != first
    replayed = token(issuer, refresh_token=first, **form)
    assert replayed.json()["error"] == "invalid_grant"
    wider = token(issuer, refresh_token=renewed.json()["refresh_token"], scope="mcp:tools mcp:admin", **form)
    assert wider.json()["error"] == "invalid_scope"


def test_a_confidential_client_must_authenticate(issuer: str) -> None:
    code = authorize(issuer, client_id="backend")["code"][0]
    assert exchange(issuer, code, client_id="backend").status_code == 401
    code = authorize(issuer, client_id="backend")["code"][0]
    response = httpx.post(
        f"{issuer}/token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": VERIFIER},
        auth=("backend", "s3cret"),
    )
    assert response.status_code == 200


def test_the_metadata_and_the_keys_are_public_to_any_page(issuer: str) -> None:
    asked = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "mcp-protocol-version"}
    for url in (f"{issuer}/.well-known/oauth-authorization-server", f"{issuer}/jwks"):
        assert httpx.get(url, headers={"Origin": "https://app.example"}).headers["access-control-allow-origin"] == "*"
        preflight = httpx.options(url, headers={"Origin": "https://app.example", **asked})
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
        assert preflight.headers["access-control-allow-headers"] == "mcp-protocol-version"


@pytest.mark.parametrize(
    ("page", "readable"),
    [
        ("http://127.0.0.1:5173", True),  # the origin of the client's loopback redirect URI, any port
        ("http://localhost:5173", False),
        ("https://evil.example", False),
    ],
)
def test_only_a_public_clients_own_page_reads_its_token_responses(issuer: str, page: str, readable: bool) -> None:
    form = {"grant_type": "authorization_code", "redirect_uri": REDIRECT, "client_id": "app", "resource": RESOURCE}
    for verifier, status in ((VERIFIER, 200), ("w" * 50, 400)):  # its errors too
        code = authorize(issuer)["code"][0]
        sent = {**form, "code": code, "code_verifier": verifier}
        response = httpx.post(f"{issuer}/token", data=sent, headers={"Origin": page})
        assert response.status_code == status
        assert response.headers.get("access-control-allow-origin") == (page if readable else None)
        assert response.headers.get("vary") == ("Origin" if readable else None)


def test_no_page_reads_a_confidential_clients_tokens_nor_the_authorization_endpoint(issuer: str) -> None:
    code = authorize(issuer, client_id="backend")["code"][0]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": VERIFIER}
    page = {"Origin": "http://127.0.0.1:5173"}
    answer = httpx.post(f"{issuer}/token", data=form, auth=("backend", "s3cret"), headers=page)
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers
    query = {"response_type": "code", "client_id": "app", "redirect_uri": REDIRECT, "resource": RESOURCE}
    navigated = httpx.get(f"{issuer}/authorize?{urlencode(query)}", headers=page)
    assert "access-control-allow-origin" not in navigated.headers


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("issuer", None, id="rfc8414"),
        pytest.param("authorization_response_iss_parameter_supported", True, id="iss-parameter"),
        pytest.param("code_challenge_methods_supported", ["S256"], id="pkce-s256"),
        pytest.param("client_id_metadata_document_supported", True, id="cimd"),
    ],
)
def test_the_metadata_advertises(issuer: str, field: str, value: Any) -> None:
    """RFC 8414 metadata at the path-inserted well-known URI, one advertised feature per case."""
    mount = urlsplit(issuer)
    url = f"{mount.scheme}://{mount.netloc}/.well-known/oauth-authorization-server{mount.path.rstrip('/')}"
    metadata = httpx.get(url).json()
    assert metadata[field] == (issuer if value is None else value)


def test_access_tokens_are_short_lived(issuer: str) -> None:
    body = exchange(issuer, authorize(issuer)["code"][0]).json()
    claims = jwt.decode(body["access_token"], KeySet.import_key_set(httpx.get(f"{issuer}/jwks").json())).claims
    assert 0 < claims["exp"] - claims["iat"] <= 3600 and body["expires_in"] <= 3600


class Documents:
    """Client ID metadata documents served on loopback (HTTPS in real life; see
    `MetadataDocuments(insecure_hosts=...)`), each URL's name saying how it answers:
    `good.json` names itself, under the `Host` it was asked by; `elsewhere.json` names another
    URL; `nameless.json` has no `client_name`; `big.json` is over the size bound (sent chunked,
    with no length); `drip.json` comes a byte every 0.3 s; `no-store.json` may not be cached;
    `slow-*.json` come after `slow` seconds. `fetches` counts the requests for each name."""

    def __init__(self) -> None:
        self.base = ""
        self.fetches: dict[str, int] = {}
        self.slow = 0.0

    def reset(self) -> None:
        self.fetches.clear()
        self.slow = 0.0

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def document(request: Request) -> Response:
            name = request.path_params["name"]
            self.fetches[name] = self.fetches.get(name, 0) + 1
            own = f"{request.url.scheme}://{request.headers['host']}/clients/{name}"
            body: dict[str, Any] = {"client_id": own, "client_name": "CIMD app", "redirect_uris": [REDIRECT]}
            if name == "elsewhere.json":
                body["client_id"] = own.replace("elsewhere.json", "good.json")
            if name == "nameless.json":
                del body["client_name"]
            if name == "big.json":
                body["padding"] = "x" * 6000

                async def chunks() -> Any:
                    yield json.dumps(body).encode()

                return StreamingResponse(chunks(), media_type="application/json")
            if name == "drip.json":

                async def drip() -> Any:
                    for byte in json.dumps(body).encode():
                        await asyncio.sleep(0.3)
                        yield bytes([byte])

                return StreamingResponse(drip(), media_type="application/json")
            if name.startswith("slow-"):
                await asyncio.sleep(self.slow)
            headers = {"Cache-Control": "no-store"} if name == "no-store.json" else {}
            return JSONResponse(body, headers=headers)

        return Starlette(routes=[Route("/clients/{name:str}", document)])


@pytest.fixture(scope="module")
def document_server() -> Iterator[Documents]:
    documents = Documents()
    with running(documents.app()) as base:
        documents.base = base
        yield documents


@pytest.fixture
def metadata_documents(document_server: Documents) -> str:
    document_server.reset()
    return document_server.base


@contextmanager
def fetching(**options: Any) -> Iterator[str]:
    """An authorization server (auto-approving) fetching documents with these `MetadataDocuments`
    options (by default from loopback, over http); yields its issuer."""
    deferred = Deferred()
    with running(deferred) as issuer:
        documents = MetadataDocuments(**{"insecure_hosts": ["127.0.0.1"], **options})
        deferred.app = create_app(issuer, auto_approve="alice", resources=[RESOURCE], documents=documents)
        yield issuer


def ask(issuer: str, client_id: str, redirect_uri: str = REDIRECT) -> httpx.Response:
    """The authorization request of `client_id`, answered without following any redirect."""
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": create_s256_code_challenge(VERIFIER),
        "code_challenge_method": "S256",
        "resource": RESOURCE,
    }
    return httpx.get(f"{issuer}/authorize?{urlencode(query)}")


def test_a_client_id_metadata_document_is_fetched_and_checked(metadata_documents: str) -> None:
    with fetching() as issuer:
        client_id = f"{metadata_documents}/clients/good.json"
        code = authorize(issuer, client_id=client_id)["code"][0]
        assert exchange(issuer, code, client_id=client_id).status_code == 200
        # The document must name itself, and list the redirect URI.
        for bad in (f"{metadata_documents}/clients/elsewhere.json", f"{metadata_documents}/nothing-here"):
            assert ask(issuer, bad).status_code == 400
        assert ask(issuer, client_id, "http://127.0.0.1:1/other").status_code == 400
    # Plain http is refused unless the host is allowed (loopback tests only).
    with fetching(insecure_hosts=()) as issuer:
        assert ask(issuer, f"{metadata_documents}/clients/good.json").status_code == 400


def test_a_document_without_a_client_name_gets_no_code(metadata_documents: str) -> None:
    """client-registration.mdx: the document MUST include `client_name`, and the server MUST
    check the required fields (issue 25: a code was issued without it)."""
    with fetching() as issuer:
        response = ask(issuer, f"{metadata_documents}/clients/nameless.json")
        assert response.status_code == 400 and "location" not in response.headers


class Listener:
    """A loopback port that counts the connections made to it (and answers none)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.sock.settimeout(0.05)

    def count(self) -> int:
        with contextlib.suppress(TimeoutError):
            while True:
                connection, _ = self.sock.accept()
                connection.close()
                self.accepted += 1
        return self.accepted


@pytest.mark.parametrize(
    "template",
    [
        "https://127.0.0.1:{port}/client.json",
        "https://localhost:{port}/client.json",
        "https://[::ffff:127.0.0.1]:{port}/client.json",
        "https://127.0.0.1.nip.invalid:{port}/client.json",
        "http://127.0.0.1:{port}/client.json",
    ],
)
def test_documents_are_fetched_from_public_addresses_only(template: str) -> None:
    """Issue 25: the server connected to any host and port named as `client_id` (an SSRF, and
    with its answer times a port scanner). Unless configured for tests, loopback is never asked."""
    listener = Listener()
    with fetching(insecure_hosts=()) as issuer:
        assert ask(issuer, template.format(port=listener.port)).status_code == 400
    assert listener.count() == 0
    listener.sock.close()


@pytest.fixture(scope="module")
def tls_documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, ssl.SSLContext]]:
    """The documents over HTTPS on loopback, with a certificate for `localhost` only, from a CA
    made here; yields the port and a context that trusts that CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def certificate(subject: str, key: Any, issuer: tuple[x509.Name, Any] | None, san: list[Any]) -> x509.Certificate:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        signer_name, signer_key = issuer or (name, key)
        now = datetime.datetime.now(datetime.UTC)
        serial, until = x509.random_serial_number(), now + datetime.timedelta(hours=1)
        builder = x509.CertificateBuilder(signer_name, name, key.public_key(), serial, now, until)  # issuer first
        builder = builder.add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
        builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_key.public_key()), critical=False
        )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return builder.sign(signer_key, hashes.SHA256())

    folder = tmp_path_factory.mktemp("tls")
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("test CA", ca_key, None, [])
    leaf = certificate("localhost", leaf_key, (ca.subject, ca_key), [x509.DNSName("localhost")])
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_pem = leaf_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (folder / "leaf.key").write_bytes(key_pem)
    trusting = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    with running(Documents().app(), tls=(str(folder / "leaf.pem"), str(folder / "leaf.key"))) as base:
        yield int(str(urlsplit(base).port)), trusting


def test_over_https_the_connection_goes_to_the_address_checked_and_the_certificate_to_the_name(
    tls_documents: tuple[int, ssl.SSLContext],
) -> None:
    """The fetch connects to the address it resolved and checked (not a second DNS answer), with
    the name in `Host` and in TLS: a certificate for `localhost` serves `https://localhost`, and
    the same server reached as `https://127.0.0.1` fails its certificate check."""
    port, trusting = tls_documents
    with fetching(insecure_hosts=["localhost", "127.0.0.1"], verify=trusting) as issuer:
        client_id = f"https://localhost:{port}/clients/good.json"
        assert "code=" in ask(issuer, client_id).headers["location"]
        assert ask(issuer, f"https://127.0.0.1:{port}/clients/good.json").status_code == 400
    with fetching(insecure_hosts=["localhost"]) as issuer:  # the default trust: no test CA in it
        assert ask(issuer, f"https://localhost:{port}/clients/good.json").status_code == 400


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # a cloud's metadata service
        ("100.64.0.1", False),  # shared address space (carrier-grade NAT)
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
    ],
)
def test_which_addresses_are_public(address: str, public: bool) -> None:
    assert metadata_documents_module._public(ipaddress.ip_address(address)) is public


def test_a_document_sent_a_byte_at_a_time_is_given_up_on_at_one_deadline(metadata_documents: str) -> None:
    """Issue 25: the limit was per read, so a byte every 3 s held a request 30 s; the deadline is
    now for the whole fetch."""
    with fetching(timeout=1.0) as issuer:
        started = time.monotonic()
        assert ask(issuer, f"{metadata_documents}/clients/drip.json").status_code == 400
        assert time.monotonic() - started < 2.5


def test_a_document_past_the_size_bound_is_refused(metadata_documents: str) -> None:
    with fetching() as issuer:
        assert ask(issuer, f"{metadata_documents}/clients/big.json").status_code == 400


def test_a_document_is_fetched_once_and_kept_unless_it_says_no_store(
    metadata_documents: str, document_server: Documents
) -> None:
    with fetching() as issuer:
        for _ in range(3):
            assert "code=" in ask(issuer, f"{metadata_documents}/clients/good.json").headers["location"]
            assert "code=" in ask(issuer, f"{metadata_documents}/clients/no-store.json").headers["location"]
            assert ask(issuer, f"{metadata_documents}/clients/nameless.json").status_code == 400
    assert document_server.fetches == {"good.json": 1, "no-store.json": 3, "nameless.json": 1}


@pytest.mark.parametrize(
    ("cache_control", "seconds"),
    [
        ("", metadata_documents_module.CACHE_SECONDS),
        ("max-age=60", 60),
        ("public, Max-Age=\"120\"", 120),
        ("max-age=999999", metadata_documents_module.CACHE_MAX_SECONDS),
        ("no-store", 0),
        ("private, no-cache", 0),
        ("max-age=60, no-store", 0),
        ("s-maxage=60", metadata_documents_module.CACHE_SECONDS),
    ],
)
def test_a_documents_cache_control_says_how_long_it_is_kept(cache_control: str, seconds: float) -> None:
    """RFC 9111 §5.2.2, as client-registration.mdx asks (SHOULD cache respecting HTTP cache
    headers), up to CACHE_MAX_SECONDS."""
    assert metadata_documents_module._keep_for(cache_control) == seconds


def test_the_cache_keeps_max_cached_urls_the_oldest_going_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata_documents_module, "MAX_CACHED", 2)
    documents = MetadataDocuments()
    for n in range(3):
        documents._remember(f"https://app{n}.example/c.json", metadata_documents_module.Refused("no"), 60)
    assert list(documents._cache) == ["https://app1.example/c.json", "https://app2.example/c.json"]


@pytest.mark.anyio
async def test_fetches_are_shared_by_url_and_capped_at_once_and_per_caller(
    metadata_documents: str, document_server: Documents
) -> None:
    """One fetch per URL at a time, `max_per_caller` URLs for one peer, `max_concurrent` in all;
    one more is 503 at once, not queued."""
    document_server.slow = 1.0
    with fetching(max_concurrent=3, max_per_caller=2) as issuer:
        peers = {
            peer: httpx.AsyncClient(timeout=10, transport=httpx.AsyncHTTPTransport(local_address=peer))
            for peer in ("127.0.0.1", "127.0.0.2", "127.0.0.3")
        }

        async def get(name: str, peer: str = "127.0.0.1") -> httpx.Response:
            client_id = f"{metadata_documents}/clients/{name}"
            query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT}
            return await peers[peer].get(f"{issuer}/authorize?{urlencode(query)}")

        async def refused_at_once(name: str, peer: str) -> None:
            started = time.monotonic()
            refused = await get(name, peer)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "5", (name, peer)
            assert time.monotonic() - started < 0.9, "refused at once, not queued"

        async def until_fetched(count: int) -> None:
            deadline = time.monotonic() + 5
            while len(document_server.fetches) < count and time.monotonic() < deadline:
                await asyncio.sleep(0.01)

        held = [asyncio.create_task(get(name)) for name in ("slow-a.json", "slow-b.json")]
        await until_fetched(2)
        await refused_at_once("slow-c.json", "127.0.0.1")  # this peer has its two
        held.append(asyncio.create_task(get("slow-c.json", "127.0.0.2")))  # another peer may
        await until_fetched(3)
        await refused_at_once("slow-d.json", "127.0.0.3")  # three in all
        answers = await asyncio.gather(*held, get("slow-a.json", "127.0.0.3"), get("slow-a.json"))
        for http in peers.values():
            await http.aclose()
    assert [response.status_code for response in answers] == [302] * 5
    assert document_server.fetches == {"slow-a.json": 1, "slow-b.json": 1, "slow-c.json": 1}


def test_the_authorization_servers_limits_have_their_lines_in_the_limits_table() -> None:
    table = (Path(__file__).parents[1] / "docs/patterns/production.md").read_text("utf-8")
    rows = {
        line.split("|")[1].strip(): line.split("|")[2].strip() for line in table.splitlines() if line.startswith("| ")
    }
    documents = metadata_documents_module
    assert rows["fetching a client ID metadata document (the example authorization server)"] == (
        f"{documents.TIMEOUT:g} s for the whole fetch; {documents.MAX_BYTES // 1024} KiB;"
        f" {documents.MAX_CONCURRENT} URLs at once, {documents.MAX_PER_CALLER} for one peer, one fetch per URL;"
        f" kept {documents.CACHE_SECONDS // 60} min"
        f" (its `Cache-Control: max-age` up to {documents.CACHE_MAX_SECONDS // 3600} h),"
        f" a failure {documents.FAILURE_CACHE_SECONDS} s, {documents.MAX_CACHED} URLs"
    )
    assert rows["a form at the token endpoint and the consent decision"] == (
        f"{authorization_server.MAX_FORM_BYTES // 1024} KiB, {authorization_server.MAX_FORM_FIELDS} fields,"
        " `application/x-www-form-urlencoded` only"
    )
    assert rows["consents in flight, unused codes, refresh tokens (each)"] == f"{authorization_server.MAX_PENDING:,}"
    assert rows["origins the authorization demo serves"].endswith(
        f"others (a `Host` naming another port): {MAX_ORIGINS}"
    )
