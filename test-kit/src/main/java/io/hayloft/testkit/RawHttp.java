package io.hayloft.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A raw-socket HTTP/1.1 exchange for hostile-input tests: sends exactly the bytes given (however
 * malformed) and reads one final response (skipping interim {@code 1xx} ones): status, headers, and a
 * body of {@code Content-Length} bytes (none for a HEAD). Does not wait for the server to close the connection, so a
 * server that answers early (413 before the body) is read as soon as it answers.
 */
public final class RawHttp {
    /** One response; {@code status} is -1 when the server closed the connection without answering. */
    public record Response(int status, Map<String, String> headers, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Thrown when the server neither answers nor closes within the timeout. */
    public static final class Hang extends IOException {
        private static final long serialVersionUID = 1L;

        Hang(String what) {
            super(what);
        }
    }

    private RawHttp() {
    }

    public static Response exchange(String address, byte[] request, int timeoutMillis) throws IOException {
        int colon = address.lastIndexOf(':');
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))),
                    timeoutMillis);
            s.setSoTimeout(timeoutMillis);
            OutputStream out = s.getOutputStream();
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                // The server may answer and close before reading everything we send (an early 413): read its answer.
            }
            boolean head = request.length >= 5 && new String(request, 0, 5, StandardCharsets.ISO_8859_1).equals("HEAD ");
            try {
                return read(s.getInputStream(), head);
            } catch (SocketTimeoutException e) {
                throw new Hang("no answer within " + timeoutMillis + " ms");
            }
        }
    }

    /**
     * Reads one final response (interim {@code 1xx} ones skipped) from a connection the caller opened and
     * wrote to itself, e.g. while another thread still sends the body: as soon as its {@code Content-Length}
     * bytes are in, without waiting for the server to close the connection (a kept-alive one stays open
     * until its idle timeout). {@code head}: the request was a HEAD, so the answer has no body. A read
     * timeout is the socket's own ({@link Socket#setSoTimeout}).
     */
    public static Response read(InputStream in, boolean head) throws IOException {
        while (true) {
            Response r = readOne(in, head);
            if (r.status() < 100 || r.status() >= 200) {
                return r;
            }
        }
    }

    /** One response; the answer to a HEAD has no body whatever its Content-Length says. */
    private static Response readOne(InputStream in, boolean head) throws IOException {
        String status = line(in);
        if (status == null) {
            return new Response(-1, Map.of(), new byte[0]);
        }
        String[] p = status.split(" ", 3);
        if (p.length < 2 || !p[0].startsWith("HTTP/")) {
            throw new IOException("not an HTTP status line: " + status);
        }
        int code = Integer.parseInt(p[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String h = line(in); h != null && !h.isEmpty(); h = line(in)) {
            int c = h.indexOf(':');
            if (c > 0) {
                headers.put(h.substring(0, c).trim().toLowerCase(Locale.ROOT), h.substring(c + 1).trim());
            }
        }
        int length = head || code < 200 ? 0 : Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        return new Response(code, headers, body);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }
}
