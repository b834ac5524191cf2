package io.hayloft.bench.cache;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal blocking HTTP/1.1 keep-alive client for load generation: one connection, one request
 * at a time, reads the status and Content-Length body. Far cheaper per request than
 * {@code java.net.http}, so the load tool measures the server, not the client. Not thread-safe: one
 * per load thread.
 */
final class MiniHttp implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final String host;
    private byte[] buf = new byte[64 * 1024];

    MiniHttp(String hostPort) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        socket = new Socket(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        host = hostPort;
    }

    /** Sends a GET and returns the status; the body is read and dropped, its length kept in {@link #lastLength}. */
    int get(String path) throws IOException {
        out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return readResponse();
    }

    int lastLength;

    private int readResponse() throws IOException {
        String status = line();
        if (status == null || !status.startsWith("HTTP/1.1 ")) {
            throw new IOException("bad status line: " + status);
        }
        int code = Integer.parseInt(status.substring(9, 12));
        int length = 0;
        for (String h = line(); h != null && !h.isEmpty(); h = line()) {
            if (h.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Integer.parseInt(h.substring(15).trim());
            }
        }
        if (buf.length < length) {
            buf = new byte[length];
        }
        int got = 0;
        while (got < length) {
            int n = in.read(buf, got, length - got);
            if (n < 0) {
                throw new IOException("connection closed mid-body");
            }
            got += n;
        }
        lastLength = length;
        return code;
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder(64);
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                int len = sb.length();
                if (len > 0 && sb.charAt(len - 1) == '\r') {
                    sb.setLength(len - 1);
                }
                return sb.toString();
            }
            sb.append((char) c);
        }
        return sb.length() == 0 ? null : sb.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
