package io.hayloft.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A loopback TCP server that answers each HTTP request with scripted raw bytes, then closes the
 * connection: the "store that answers garbage" of the tests (no Hayloft server answers like this).
 * A null answer means: read the request and never answer (for timeouts).
 */
public final class RawServer implements AutoCloseable {
    /** A request as received: the request line, the headers block and the body. */
    public record Request(String line, String headers, byte[] body) {
        public String header(String name) {
            for (String h : headers.split("\r\n")) {
                int c = h.indexOf(':');
                if (c > 0 && h.substring(0, c).trim().equalsIgnoreCase(name)) {
                    return h.substring(c + 1).trim();
                }
            }
            return null;
        }
    }

    private final ServerSocket socket;
    private final Thread thread;
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<Socket> open = new CopyOnWriteArrayList<>();

    public RawServer(Function<Request, byte[]> answer) throws IOException {
        socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        thread = new Thread(() -> {
            while (!socket.isClosed()) {
                try {
                    Socket s = socket.accept();
                    open.add(s);
                    Request r = read(s.getInputStream());
                    requests.add(r);
                    byte[] out = answer.apply(r);
                    if (out != null) {
                        OutputStream o = s.getOutputStream();
                        o.write(out);
                        o.flush();
                        s.close();
                    }
                } catch (IOException e) {
                    // closed
                }
            }
        }, "raw-server");
        thread.setDaemon(true);
        thread.start();
    }

    /** A full HTTP/1.1 response with Content-Length and Connection: close. */
    public static byte[] response(int status, String contentType, byte[] body) {
        String head = "HTTP/1.1 " + status + " X\r\nContent-Type: " + contentType + "\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + body.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(body, 0, all, h.length, body.length);
        return all;
    }

    public static byte[] response(int status, String contentType, String body) {
        return response(status, contentType, body.getBytes(StandardCharsets.UTF_8));
    }

    public String address() {
        return "127.0.0.1:" + socket.getLocalPort();
    }

    public List<Request> requests() {
        return requests;
    }

    private static Request read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
        }
        String text = head.toString(StandardCharsets.US_ASCII);
        int nl = text.indexOf("\r\n");
        String line = nl < 0 ? text : text.substring(0, nl);
        String headers = nl < 0 ? "" : text.substring(nl + 2);
        int length = 0;
        for (String h : headers.split("\r\n")) {
            if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(h.substring(15).trim());
            }
        }
        return new Request(line, headers, in.readNBytes(length));
    }

    @Override
    public void close() throws IOException {
        socket.close();
        for (Socket s : open) {
            s.close();
        }
    }
}
