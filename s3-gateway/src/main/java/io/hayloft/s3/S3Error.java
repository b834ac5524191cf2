package io.hayloft.s3;

/**
 * S3's error codes with their HTTP statuses (the XML {@code <Error><Code>}): every error the gateway
 * answers is one of these. Immutable; thread-safe.
 */
public enum S3Error {
    ACCESS_DENIED("AccessDenied", 403, "Access Denied"),
    AUTHORIZATION_HEADER_MALFORMED("AuthorizationHeaderMalformed", 400, "The authorization header is malformed"),
    AUTHORIZATION_QUERY_PARAMETERS_ERROR("AuthorizationQueryParametersError", 400, "The presigned URL's query parameters are malformed"),
    BAD_DIGEST("BadDigest", 400, "The Content-MD5 or checksum you specified did not match what we received"),
    BUCKET_ALREADY_OWNED_BY_YOU("BucketAlreadyOwnedByYou", 409, "Your previous request to create the named bucket succeeded and you already own it"),
    BUCKET_NOT_EMPTY("BucketNotEmpty", 409, "The bucket you tried to delete is not empty"),
    ENTITY_TOO_LARGE("EntityTooLarge", 400, "Your proposed upload exceeds the maximum allowed object size"),
    ENTITY_TOO_SMALL("EntityTooSmall", 400, "Your proposed upload is smaller than the minimum allowed object size"),
    EXPIRED_TOKEN("ExpiredToken", 400, "The provided token has expired"),
    INCOMPLETE_BODY("IncompleteBody", 400, "You did not provide the number of bytes specified by the Content-Length HTTP header"),
    INTERNAL_ERROR("InternalError", 500, "We encountered an internal error. Please try again"),
    INVALID_ACCESS_KEY_ID("InvalidAccessKeyId", 403, "The AWS access key Id you provided does not exist in our records"),
    INVALID_ARGUMENT("InvalidArgument", 400, "Invalid Argument"),
    INVALID_BUCKET_NAME("InvalidBucketName", 400, "The specified bucket is not valid"),
    INVALID_DIGEST("InvalidDigest", 400, "The Content-MD5 or checksum you specified is not valid"),
    INVALID_PART("InvalidPart", 400, "One or more of the specified parts could not be found"),
    INVALID_PART_ORDER("InvalidPartOrder", 400, "The list of parts was not in ascending order"),
    INVALID_RANGE("InvalidRange", 416, "The requested range is not satisfiable"),
    INVALID_REQUEST("InvalidRequest", 400, "Invalid Request"),
    KEY_TOO_LONG("KeyTooLongError", 400, "Your key is too long"),
    MALFORMED_XML("MalformedXML", 400, "The XML you provided was not well-formed or did not validate against our published schema"),
    METHOD_NOT_ALLOWED("MethodNotAllowed", 405, "The specified method is not allowed against this resource"),
    MISSING_CONTENT_LENGTH("MissingContentLength", 411, "You must provide the Content-Length HTTP header"),
    MISSING_SECURITY_HEADER("MissingSecurityHeader", 400, "Your request is missing a required header"),
    NO_SUCH_BUCKET("NoSuchBucket", 404, "The specified bucket does not exist"),
    NO_SUCH_KEY("NoSuchKey", 404, "The specified key does not exist"),
    NO_SUCH_UPLOAD("NoSuchUpload", 404, "The specified multipart upload does not exist"),
    NOT_IMPLEMENTED("NotImplemented", 501, "A header or query you provided implies functionality that is not implemented"),
    NOT_MODIFIED("NotModified", 304, "Not Modified"),
    PRECONDITION_FAILED("PreconditionFailed", 412, "At least one of the preconditions you specified did not hold"),
    CONDITIONAL_REQUEST_CONFLICT("ConditionalRequestConflict", 409, "A conflicting operation occurred"),
    REQUEST_TIME_TOO_SKEWED("RequestTimeTooSkewed", 403, "The difference between the request time and the server's time is too large"),
    SERVICE_UNAVAILABLE("ServiceUnavailable", 503, "Please reduce your request rate"),
    SIGNATURE_DOES_NOT_MATCH("SignatureDoesNotMatch", 403,
            "The request signature we calculated does not match the signature you provided. Check your key and signing method"),
    SLOW_DOWN("SlowDown", 503, "Please reduce your request rate"),
    X_AMZ_CONTENT_SHA256_MISMATCH("XAmzContentSHA256Mismatch", 400, "The provided 'x-amz-content-sha256' header does not match what was computed");

    private final String code;
    private final int status;
    private final String message;

    S3Error(String code, int status, String message) {
        this.code = code;
        this.status = status;
        this.message = message;
    }

    /** The {@code <Code>} S3 uses. */
    public String code() {
        return code;
    }

    public int status() {
        return status;
    }

    /** S3's default {@code <Message>}. */
    public String message() {
        return message;
    }

    public S3Exception exception() {
        return new S3Exception(this, message);
    }

    public S3Exception exception(String detail) {
        return new S3Exception(this, detail);
    }
}
