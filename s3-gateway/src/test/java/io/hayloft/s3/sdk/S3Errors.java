package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import software.amazon.awssdk.services.s3.model.S3Exception;

/** Assertions on the errors the SDK raises from S3's answers. Stateless; thread-safe. */
public final class S3Errors {
    private S3Errors() {
    }

    /**
     * {@code call} fails with S3 error {@code code} and HTTP {@code status}, as the SDK parsed them from
     * S3's XML error body, with a request id.
     */
    public static S3Exception expect(ThrowingCallable call, String code, int status) {
        S3Exception e = catchThrowableOfType(S3Exception.class, call);
        assertThat(e).as("an S3 error %s (%d)", code, status).isNotNull();
        assertThat(e.awsErrorDetails().errorCode()).as("error code of %s", e.getMessage()).isEqualTo(code);
        assertThat(e.statusCode()).as("status of %s", e.getMessage()).isEqualTo(status);
        assertThat(e.requestId()).as("request id of %s", e.getMessage()).isNotBlank();
        return e;
    }

    /** {@code call} fails with HTTP {@code status} (a HEAD or a 304: no body, so no code) and a request id. */
    public static S3Exception expectStatus(ThrowingCallable call, int status) {
        S3Exception e = catchThrowableOfType(S3Exception.class, call);
        assertThat(e).as("an S3 error with status %d", status).isNotNull();
        assertThat(e.statusCode()).as("status of %s", e.getMessage()).isEqualTo(status);
        assertThat(e.requestId()).as("request id of %s", e.getMessage()).isNotBlank();
        return e;
    }
}
