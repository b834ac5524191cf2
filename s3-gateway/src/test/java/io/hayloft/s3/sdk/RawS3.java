package io.hayloft.s3.sdk;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;

/**
 * Requests the SDK's clients would not send as they are: signed by the SDK's own SigV4 signer with a
 * chosen clock, secret or payload, or not signed at all, sent with {@code java.net.http}, and S3's XML
 * error bodies read back. Thread-safe.
 */
public final class RawS3 {
    private static final Pattern CODE = Pattern.compile("<Code>([^<]*)</Code>");
    private static final Pattern REQUEST_ID = Pattern.compile("<RequestId>([^<]*)</RequestId>");
    /** Headers java.net.http sets itself and refuses to be given. */
    private static final Set<String> RESTRICTED = Set.of("host", "content-length", "connection", "expect", "upgrade");

    private final URI endpoint;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public RawS3(URI endpoint) {
        this.endpoint = endpoint;
    }

    /** An answer: status, headers, body as text. */
    public record Answer(int status, Map<String, List<String>> headers, String body) {
        /** The {@code <Code>} of an S3 XML error body, or null. */
        public String code() {
            Matcher m = CODE.matcher(body);
            return m.find() ? m.group(1) : null;
        }

        /** The {@code <RequestId>} of an S3 XML error body, or null. */
        public String requestId() {
            Matcher m = REQUEST_ID.matcher(body);
            return m.find() ? m.group(1) : null;
        }

        public String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name)).map(e -> e.getValue().get(0))
                    .findFirst().orElse(null);
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    /** An unsigned request {@code METHOD /path?query} with {@code body} (null: none). */
    public Answer anonymous(String method, String pathAndQuery, byte[] body) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(endpoint.resolve(pathAndQuery)), method, body);
    }

    /** Sends {@code request} as it is to {@code uri} (a presigned URL, say). */
    public Answer send(URI uri, String method, Map<String, String> headers, byte[] body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri);
        headers.forEach((k, v) -> {
            if (!RESTRICTED.contains(k.toLowerCase(Locale.ROOT))) {
                b.header(k, v);
            }
        });
        return send(b, method, body);
    }

    /**
     * A request signed in the header by SigV4 (payload signed) with {@code secretKey} as of {@code clock}.
     * {@code path} is already URL-encoded; {@code headers} are signed too.
     */
    public Answer signed(String method, String path, Map<String, String> query, Map<String, String> headers, byte[] body,
                         String accessKey, String secretKey, Clock clock) throws IOException, InterruptedException {
        SdkHttpFullRequest.Builder r = request(method, path, query, headers);
        byte[] payload = body == null ? new byte[0] : body;
        r.putHeader("x-amz-content-sha256", HexFormat.of().formatHex(Digests.digest("SHA-256", payload)));
        SignedRequest signed = AwsV4HttpSigner.create().sign(s -> s
                .identity(AwsBasicCredentials.create(accessKey, secretKey))
                .request(r.build())
                .payload(ContentStreamProvider.fromByteArray(payload))
                .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, "s3")
                .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                .putProperty(AwsV4FamilyHttpSigner.DOUBLE_URL_ENCODE, false)
                .putProperty(AwsV4FamilyHttpSigner.NORMALIZE_PATH, false)
                .putProperty(HttpSigner.SIGNING_CLOCK, clock));
        return send(signed.request().getUri(), method, flatten(signed.request()), body);
    }

    /** A presigned URL (query-string SigV4, {@code UNSIGNED-PAYLOAD}) made as of {@code clock}, valid {@code expires}. */
    public URI presign(String method, String path, String accessKey, String secretKey, Clock clock, Duration expires) {
        SignedRequest signed = AwsV4HttpSigner.create().sign(s -> s
                .identity(AwsBasicCredentials.create(accessKey, secretKey))
                .request(request(method, path, Map.of(), Map.of()).build())
                .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, "s3")
                .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                .putProperty(AwsV4FamilyHttpSigner.DOUBLE_URL_ENCODE, false)
                .putProperty(AwsV4FamilyHttpSigner.NORMALIZE_PATH, false)
                .putProperty(AwsV4FamilyHttpSigner.PAYLOAD_SIGNING_ENABLED, false)
                .putProperty(AwsV4FamilyHttpSigner.AUTH_LOCATION, AwsV4FamilyHttpSigner.AuthLocation.QUERY_STRING)
                .putProperty(AwsV4FamilyHttpSigner.EXPIRATION_DURATION, expires)
                .putProperty(HttpSigner.SIGNING_CLOCK, clock));
        return signed.request().getUri();
    }

    private SdkHttpFullRequest.Builder request(String method, String path, Map<String, String> query, Map<String, String> headers) {
        SdkHttpFullRequest.Builder r = SdkHttpFullRequest.builder()
                .method(SdkHttpMethod.fromValue(method))
                .protocol(endpoint.getScheme())
                .host(endpoint.getHost())
                .port(endpoint.getPort())
                .encodedPath(path);
        query.forEach(r::putRawQueryParameter);
        headers.forEach(r::putHeader);
        return r;
    }

    private static Map<String, String> flatten(SdkHttpRequest r) {
        java.util.LinkedHashMap<String, String> h = new java.util.LinkedHashMap<>();
        r.forEachHeader((k, v) -> h.put(k, String.join(",", v)));
        return h;
    }

    private Answer send(HttpRequest.Builder b, String method, byte[] body) throws IOException, InterruptedException {
        b.timeout(Duration.ofSeconds(30)).method(method,
                body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(r.statusCode(), r.headers().map(), r.body());
    }
}
