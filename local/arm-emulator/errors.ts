// ARM's error envelope and the error responses the emulator produces itself (as opposed to the
// injected Azure faults in azure-messages.ts). Codes and texts follow what ARM and the Compute
// resource provider return.

export interface ArmErrorDetail {
  code: string;
  message: string;
  target?: string;
}

export interface ArmErrorBody {
  error: {
    code: string;
    message: string;
    target?: string;
    details?: ArmErrorDetail[];
  };
}

/** An error response: HTTP status, ARM code and message, and any extra headers (Retry-After). */
export class ArmError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly target?: string,
    readonly details?: ArmErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ArmError';
  }

  body(): ArmErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.target !== undefined ? { target: this.target } : {}),
        ...(this.details !== undefined ? { details: this.details } : {}),
      },
    };
  }
}

export function invalidParameter(message: string, target: string): ArmError {
  return new ArmError(400, 'InvalidParameter', message, target);
}

export function missingParameter(target: string): ArmError {
  return invalidParameter(`Required parameter '${target}' is missing (null).`, target);
}

export function missingApiVersion(): ArmError {
  return new ArmError(
    400,
    'MissingApiVersionParameter',
    'The api-version query parameter (?api-version=) is required for all requests.',
  );
}

export function invalidRequestContent(reason: string): ArmError {
  return new ArmError(
    400,
    'InvalidRequestContent',
    `The request content was invalid and could not be deserialized: '${reason}'.`,
  );
}

export function resourceNotFound(resourceType: string, name: string, resourceGroup: string): ArmError {
  return new ArmError(
    404,
    'ResourceNotFound',
    `The Resource '${resourceType}/${name}' under resource group '${resourceGroup}' was not found. ` +
      'For more details please go to https://aka.ms/ARMResourceNotFoundFix',
  );
}

export function propertyChangeNotAllowed(property: string): ArmError {
  return new ArmError(
    409,
    'PropertyChangeNotAllowed',
    `Changing property '${property}' is not allowed.`,
    property,
  );
}

export function missingAuthorization(): ArmError {
  return new ArmError(
    401,
    'AuthenticationFailed',
    "Authentication failed. The 'Authorization' header is missing.",
    undefined,
    undefined,
    {
      'www-authenticate':
        'Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", ' +
        'error_description="The authentication failed because of missing \'Authorization\' header."',
    },
  );
}

export function invalidAuthenticationToken(): ArmError {
  return new ArmError(
    401,
    'InvalidAuthenticationToken',
    'The access token is invalid.',
    undefined,
    undefined,
    {
      'www-authenticate':
        'Bearer authorization_uri="https://login.microsoftonline.com/common", error="invalid_token", ' +
        'error_description="The access token is invalid."',
    },
  );
}

export function unknownResourceType(path: string, apiVersion: string): ArmError {
  return new ArmError(
    404,
    'InvalidResourceType',
    `The resource type could not be found in the namespace 'Microsoft.Compute' for api version '${apiVersion}'. Path: ${path}`,
  );
}

export function methodNotAllowed(method: string): ArmError {
  return new ArmError(
    405,
    'MethodNotAllowed',
    `The requested method '${method}' is not allowed for this resource.`,
  );
}

/** A conditional PUT (`If-None-Match: *`) on a resource that exists. */
export function preconditionFailed(): ArmError {
  return new ArmError(
    412,
    'PreconditionFailed',
    'The condition specified using HTTP conditional header(s) is not met.',
  );
}

/**
 * A request-error fault (faults.ts): the request fails before it reaches the resource provider, with the
 * generic bodies ARM answers for a 500 or 503 unless the rule states its own code and message.
 */
export function requestFailed(effect: { status?: number; code?: string; message?: string }): ArmError {
  const status = effect.status ?? 500;
  const code =
    effect.code ??
    (status === 500 ? 'InternalServerError' : status === 503 ? 'ServiceUnavailable' : 'RequestFailed');
  const message =
    effect.message ??
    (status === 503
      ? 'The service is temporarily unavailable. Please retry the request later.'
      : 'An internal error occurred while processing the request. Please retry the request.');
  return new ArmError(status, code, message);
}
