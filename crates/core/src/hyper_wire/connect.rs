//! How a new connection is made: straight to the server, through an http proxy that takes the
//! request in absolute form, or through a CONNECT tunnel for https; TLS (our own rustls
//! configuration, tls.rs) to the server and, for an `https://` proxy, to the proxy too. HTTP/2
//! is used when the server picks it by ALPN.

use std::future::Future;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::uri::Scheme;
use http::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::ClientConfig;
use tokio_rustls::TlsConnector;
use tower_service::Service;

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The connector of one pool: its TLS settings and its routes.
#[derive(Clone)]
pub(super) struct Connector {
    tcp: HttpConnector,
    /// To servers: ALPN h2 then http/1.1.
    tls: TlsConnector,
    /// To an `https://` proxy, which is spoken to in HTTP/1.1 only.
    tls_to_proxy: TlsConnector,
    routes: Option<Arc<Matcher>>,
}

impl Connector {
    pub(super) fn new(tls: ClientConfig, routes: Option<Arc<Matcher>>) -> Connector {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false); // https:// destinations are ours to wrap in TLS
        tcp.set_nodelay(true);
        let mut to_proxy = tls.clone();
        to_proxy.alpn_protocols = vec![b"http/1.1".to_vec()];
        Connector {
            tcp,
            tls: TlsConnector::from(Arc::new(tls)),
            tls_to_proxy: TlsConnector::from(Arc::new(to_proxy)),
            routes,
        }
    }

    async fn connect(self, dst: Uri) -> Result<Conn, BoxError> {
        let https = dst.scheme() == Some(&Scheme::HTTPS);
        let to_proxy = ToProxy {
            tcp: self.tcp.clone(),
            tls: self.tls_to_proxy.clone(),
        };
        let (stream, forward) = match route(self.routes.as_deref(), &dst) {
            None => (Stream::Tcp(tcp(self.tcp, dst.clone()).await?), false),
            Some(proxy) if https => {
                let mut tunnel = Tunnel::new(proxy.uri().clone(), to_proxy);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                (tunnel.call(dst.clone()).await?.into_inner(), false)
            }
            Some(proxy) => (to_proxy.open(proxy.uri().clone()).await?.into_inner(), true),
        };
        if !https {
            return Ok(Conn::new(stream, forward, false));
        }
        let stream = tls(&self.tls, &dst, stream).await?;
        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        Ok(Conn::new(Stream::Tls(Box::new(stream)), false, h2))
    }
}

/// The proxy `dst` goes through, if any: an http(s) proxy (a `socks` one from the environment
/// is not supported and ignored, as a proxy URL that does not parse is).
pub(super) fn route(routes: Option<&Matcher>, dst: &Uri) -> Option<Intercept> {
    let proxy = routes?.intercept(dst)?;
    matches!(proxy.uri().scheme_str(), Some("http" | "https")).then_some(proxy)
}

async fn tcp(mut tcp: HttpConnector, dst: Uri) -> Result<TcpStream, BoxError> {
    Ok(tcp.call(dst).await?.into_inner())
}

/// TLS over `stream` to the host of `dst`.
async fn tls(
    connector: &TlsConnector,
    dst: &Uri,
    stream: Stream,
) -> Result<tokio_rustls::client::TlsStream<Stream>, BoxError> {
    let host = dst.host().unwrap_or_default();
    // An IPv6 literal comes bracketed in a URI, not in a server name.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(host.to_owned())?;
    Ok(connector.connect(name, stream).await?)
}

/// Opens a connection to a proxy: TCP, and TLS for an `https://` proxy.
#[derive(Clone)]
struct ToProxy {
    tcp: HttpConnector,
    tls: TlsConnector,
}

impl ToProxy {
    async fn open(self, proxy: Uri) -> Result<TokioIo<Stream>, BoxError> {
        let stream = Stream::Tcp(tcp(self.tcp, proxy.clone()).await?);
        if proxy.scheme() != Some(&Scheme::HTTPS) {
            return Ok(TokioIo::new(stream));
        }
        let stream = tls(&self.tls, &proxy, stream).await?;
        Ok(TokioIo::new(Stream::Tls(Box::new(stream))))
    }
}

impl Service<Uri> for ToProxy {
    type Response = TokioIo<Stream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<TokioIo<Stream>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, proxy: Uri) -> Self::Future {
        Box::pin(self.clone().open(proxy))
    }
}

impl Service<Uri> for Connector {
    type Response = Conn;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Conn, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        Box::pin(self.clone().connect(dst))
    }
}

/// A socket, or TLS over one (over a tunnel that may itself run over TLS to the proxy).
pub(super) enum Stream {
    Tcp(TcpStream),
    Tls(Box<tokio_rustls::client::TlsStream<Stream>>),
}

impl Stream {
    /// The socket's descriptor (of the TCP connection under any TLS).
    fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.get_ref().0.fd(),
        }
    }
}

/// Whether a read of socket `fd` would not wait: a byte, the end, or an error. One `recv`
/// that peeks without waiting (the socket is non-blocking; `MSG_DONTWAIT` says so again).
fn readable(fd: RawFd) -> bool {
    let mut byte = [0u8; 1];
    // SAFETY: `fd` is the socket of a live `Conn` (its caller's), which owns it; `byte` is a
    // valid buffer of the length given, and a peek consumes nothing.
    #[allow(unsafe_code)]
    let read = unsafe {
        libc::recv(
            fd,
            byte.as_mut_ptr().cast(),
            byte.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    if read >= 0 {
        return true;
    }
    let error = std::io::Error::last_os_error().kind();
    !matches!(
        error,
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
    )
}

/// Why a request was not written on a pooled HTTP/1 connection: its server had closed it (or
/// sent bytes nobody asked for) while it sat idle. Nothing of the request went out, so the
/// wire sends it again on another connection (`HyperWire::exchange`), whatever its method.
#[derive(Debug)]
pub(super) struct StaleConnection;

impl std::fmt::Display for StaleConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the server closed this idle connection; nothing was written")
    }
}

impl std::error::Error for StaleConnection {}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(&mut **s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(&mut **s).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(&mut **s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(&mut **s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(&mut **s).poll_shutdown(cx),
        }
    }
}

/// A connection as the pool holds it: `forward` when it goes to an http proxy that takes the
/// request in absolute form, `h2` when the server chose HTTP/2.
///
/// An HTTP/1 connection is checked when a request starts on it after a response, as urllib3's
/// `is_connection_dropped` does: before the first byte of that request is written, one `recv`
/// that peeks tells whether the server closed it while idle. A keep-alive connection closed
/// by its server is otherwise only noticed when its task next runs, and the pool may hand it
/// out before: on the sync face the thread's connections are not driven between its requests;
/// on the async face a loaded runtime runs that task late. Such a request is refused with
/// [`StaleConnection`], unwritten, and sent again on another connection.
pub(super) struct Conn {
    io: TokioIo<Stream>,
    forward: bool,
    h2: bool,
    /// The socket to peek (an HTTP/1 connection's; an HTTP/2 one reads frames while idle).
    checked: Option<RawFd>,
    /// Whether a read came since the last write: the next write starts a new request.
    read_since_write: bool,
}

impl Conn {
    fn new(stream: Stream, forward: bool, h2: bool) -> Conn {
        let checked = (!h2).then(|| stream.fd());
        Conn {
            io: TokioIo::new(stream),
            forward,
            h2,
            checked,
            read_since_write: false,
        }
    }

    /// Before a write: refuse the first write of a request on a connection its server closed.
    fn check_before_write(&mut self) -> std::io::Result<()> {
        if !std::mem::take(&mut self.read_since_write) {
            return Ok(());
        }
        match self.checked {
            Some(fd) if readable(fd) => Err(std::io::Error::other(StaleConnection)),
            _ => Ok(()),
        }
    }

    /// Whether it goes to an http proxy that takes requests in absolute form.
    pub(super) fn is_forward(&self) -> bool {
        self.forward
    }

    /// Whether the server chose HTTP/2.
    pub(super) fn is_h2(&self) -> bool {
        self.h2
    }
}

impl Read for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let conn = self.get_mut();
        let read = Pin::new(&mut conn.io).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) {
            conn.read_since_write = true;
        }
        read
    }
}

impl Write for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let conn = self.get_mut();
        conn.check_before_write()?;
        Pin::new(&mut conn.io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let conn = self.get_mut();
        conn.check_before_write()?;
        Pin::new(&mut conn.io).poll_write_vectored(cx, bufs)
    }
}
