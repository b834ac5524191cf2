package io.hayloft.bench.store;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal blocking HTTP/1.1 keep-alive client on one socket, fast enough not to be the
 * bottleneck of a load test: it writes a request and reads the status, the headers it needs
 * (Content-Length, Connection) and the body, which it discards. Bodies must carry Content-Length.
 *
 * <p>Not thread-safe: one per load thread.
 */
public final class HttpConn implements Closeable {
    private final String host;
    private final int port;
    private Socket socket;
    private OutputStream out;
    private InputStream in;
    private final byte[] discard = new byte[64 * 1024];
    private final StringBuilder line = new StringBuilder(128);
    /** Body bytes of the last response. */
    long lastBodyBytes;

    public HttpConn(String host, int port) {
        this.host = host;
        this.port = port;
    }

    private void connect() throws IOException {
        socket = new Socket();
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress(host, port), 5000);
        socket.setSoTimeout(30_000);
        out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
        in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
    }

    /** Sends one request and returns the status code; reconnects once if the connection was closed. */
    public int send(String method, String path, byte[] body, int bodyLength) throws IOException {
        if (socket == null) {
            connect();
        }
        StringBuilder sb = new StringBuilder(96);
        sb.append(method).append(' ').append(path).append(" HTTP/1.1\r\nHost: ").append(host).append("\r\n");
        if (body != null) {
            sb.append("Content-Length: ").append(bodyLength).append("\r\n");
        }
        sb.append("\r\n");
        out.write(sb.toString().getBytes(StandardCharsets.ISO_8859_1));
        if (body != null) {
            out.write(body, 0, bodyLength);
        }
        out.flush();
        String status = readLine();
        if (status.length() < 12 || !status.startsWith("HTTP/1.")) {
            throw new IOException("bad status line: '" + status + "'");
        }
        int code = Integer.parseInt(status.substring(9, 12));
        long length = 0;
        boolean close = false;
        String h;
        while (!(h = readLine()).isEmpty()) {
            int colon = h.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String name = h.substring(0, colon).trim();
            if (name.equalsIgnoreCase("content-length")) {
                length = Long.parseLong(h.substring(colon + 1).trim());
            } else if (name.equalsIgnoreCase("connection") && h.substring(colon + 1).trim().equalsIgnoreCase("close")) {
                close = true;
            }
        }
        if (method.equals("HEAD")) {
            length = 0;
        }
        long left = length;
        while (left > 0) {
            int n = in.read(discard, 0, (int) Math.min(discard.length, left));
            if (n < 0) {
                throw new EOFException("connection closed in a response body");
            }
            left -= n;
        }
        lastBodyBytes = length;
        if (close) {
            close();
        }
        return code;
    }

    private String readLine() throws IOException {
        line.setLength(0);
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                int n = line.length();
                if (n > 0 && line.charAt(n - 1) == '\r') {
                    line.setLength(n - 1);
                }
                return line.toString();
            }
            line.append((char) c);
        }
        throw new EOFException("connection closed");
    }

    @Override
    public void close() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            socket = null;
        }
    }
}
