package io.hayloft.store.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.serverkit.http.HttpResponses;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A tiny blocking HTTP client for tests (java.net.http, HTTP/1.1). */
final class TestHttp {
    record Reply(int status, byte[] body, HttpResponse<byte[]> raw) {
        JsonNode json() throws Exception {
            return HttpResponses.JSON.readTree(body);
        }

        int errorCode() throws Exception {
            return json().path("error").path("code").asInt(-1);
        }
    }

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    TestHttp(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    Reply send(String method, String path, byte[] body) throws Exception {
        HttpRequest.BodyPublisher p = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body);
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .method(method, p).build();
        HttpResponse<byte[]> r = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
        return new Reply(r.statusCode(), r.body(), r);
    }

    Reply get(String path) throws Exception {
        return send("GET", path, null);
    }

    Reply put(String path, byte[] body) throws Exception {
        return send("PUT", path, body);
    }

    Reply post(String path, byte[] body) throws Exception {
        return send("POST", path, body == null ? new byte[0] : body);
    }

    Reply delete(String path) throws Exception {
        return send("DELETE", path, null);
    }
}
