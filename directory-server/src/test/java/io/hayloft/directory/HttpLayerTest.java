package io.hayloft.directory;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.FullHttpResponse;
import io.hayloft.format.wire.Wire;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The directory's domain code throws {@link Refusal}s and knows nothing of its HTTP layer, which
 * maps them to wire errors. The HTTP layer is {@link DirectoryHttp} (the routes, the error mapping),
 * {@link NamespaceHttp} (the S3 namespace routes, added to DirectoryHttp's router) and
 * {@link DirectoryServer} (which serves DirectoryHttp); every other class of the directory, in
 * {@code io.hayloft.directory} and the packages under it, is domain code.
 */
class HttpLayerTest {

    /** The HTTP layer's classes, nested and anonymous ones included. */
    private static final String HTTP_LAYER = "io\\.hayloft\\.directory\\.(DirectoryHttp|NamespaceHttp|DirectoryServer)(\\$.*)?";
    /** The classes that build HTTP answers: what domain code must not call. */
    private static final String HTTP_HANDLERS = "io\\.hayloft\\.directory\\.(DirectoryHttp|NamespaceHttp)(\\$.*)?";

    @Test
    void domainClassesDoNotDependOnTheHttpLayer() {
        JavaClasses main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.hayloft.directory");
        assertThat(main.contain(Directory.class) && main.contain(DirectoryHttp.class)).as("the main classes were imported").isTrue();
        noClasses().that().resideInAPackage("io.hayloft.directory..").and().haveNameNotMatching(HTTP_LAYER)
                .should().dependOnClassesThat().haveNameMatching(HTTP_HANDLERS)
                .because("domain code throws Refusal, which DirectoryHttp maps to the wire error (docs/directory-api.md)")
                .check(main);
    }

    @Test
    void aRefusalIsAnsweredExactlyAsTheHttpLayersOwnBadRequest() {
        String message = "count must be in 1..100, was 0 \"quoted\" é";
        FullHttpResponse refused = HttpResponses.error(DirectoryHttp.translate(Refusal.invalid(message)));
        FullHttpResponse direct = HttpResponses.error(CommonErrors.BAD_REQUEST.exception(message));
        try {
            assertThat(refused.status().code()).isEqualTo(400);
            assertThat(ByteBufUtil.getBytes(refused.content())).isEqualTo(ByteBufUtil.getBytes(direct.content()));
            assertThat(refused.headers().entries()).hasToString(direct.headers().entries().toString());
            assertThat(refused.content().toString(StandardCharsets.UTF_8))
                    .isEqualTo("{\"error\":{\"code\":1,\"name\":\"BAD_REQUEST\",\"message\":\"count must be in 1..100, was 0 \\\"quoted\\\" é\"}}");
        } finally {
            refused.release();
            direct.release();
        }
        assertThat(DirectoryHttp.translate(new IllegalStateException("x"))).as("only refusals are translated").isNull();
    }

    @Test
    void refusalsOfEveryDomainClassAreAnsweredAsBadRequestsOnTheWire(@TempDir Path dir) throws Exception {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = true;
        c.probeIntervalMillis = 60_000;
        c.adminToken = "admin";
        try (DirectoryServer server = DirectoryServer.start(c)) {
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://" + server.address();
            assertBadRequest(http, base, "POST", "/v1/volumes", "{\"count\": 0}", "count must be in 1..100, was 0");
            assertBadRequest(http, base, "POST", "/v1/leases", "{\"keys\": 0}", "keys must be in 1.." + Wire.MAX_LEASE_KEYS + ", was 0");
            assertBadRequest(http, base, "POST", "/v1/raid-lease", "{\"holder\": \"h\", \"ttlMillis\": 0}",
                    "ttlMillis must be in 1.." + RaidLeases.MAX_TTL_MILLIS + ", was 0");
            assertBadRequest(http, base, "POST", "/v1/backup", "{\"dir\": \"relative\"}",
                    "backup dir must be an absolute path on the directory's host, was 'relative'");
            assertBadRequest(http, base, "PUT", "/v1/s3/buckets/No_Such", "", "a bucket name is 3 to 63 characters of a-z, 0-9, "
                    + "'.' and '-', starting and ending with a letter or digit, was 'No_Such'");
        }
    }

    private static void assertBadRequest(HttpClient http, String base, String method, String path, String body, String message)
            throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + path)).header("Authorization", "Bearer admin")
                .method(method, HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(method + " " + path).isEqualTo(400);
        assertThat(r.body()).as(method + " " + path).isEqualTo(new String(HttpResponses.errorBytes(CommonErrors.BAD_REQUEST, message),
                StandardCharsets.UTF_8));
    }
}
