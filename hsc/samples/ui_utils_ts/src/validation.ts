/**
 * Form validation: single-value checks (email, URL, phone, password
 * strength), declarative field rules, and a small validator class that
 * tracks errors per field.
 */

export type FieldValue = string | number | boolean | null | undefined | string[];

export type Rule =
  | { kind: "required"; message?: string }
  | { kind: "minLength"; value: number; message?: string }
  | { kind: "maxLength"; value: number; message?: string }
  | { kind: "pattern"; value: RegExp; message?: string }
  | { kind: "email"; message?: string }
  | { kind: "url"; message?: string; requireHttps?: boolean }
  | { kind: "number"; min?: number; max?: number; integer?: boolean; message?: string }
  | { kind: "oneOf"; values: string[]; message?: string }
  | { kind: "matches"; field: string; message?: string }
  | { kind: "date"; notBefore?: string; notAfter?: string; message?: string }
  | { kind: "custom"; test: (value: FieldValue, all: Record<string, FieldValue>) => string | null };

export interface ValidationResult {
  valid: boolean;
  errors: Record<string, string[]>;
}

export type Schema = Record<string, Rule[]>;

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;
const PHONE_DIGITS = /\d/g;

export const DEFAULT_MESSAGES = {
  required: "This field is required.",
  email: "Enter a valid email address.",
  url: "Enter a valid web address.",
  number: "Enter a number.",
} as const;

/**
 * Check that a string looks like an email address: one @, something
 * before it, and a dotted domain after it with a top-level part of at least
 * two characters. Deliberately permissive; the real test is sending mail.
 */
export function isEmail(value: string): boolean {
  const trimmed = value.trim();
  if (trimmed.length > 254 || !EMAIL_PATTERN.test(trimmed)) {
    return false;
  }
  const [local, domain] = trimmed.split("@");
  return local.length <= 64 && !domain.startsWith(".") && !domain.includes("..");
}

/**
 * Check that a string is an absolute http or https URL with a host name.
 * Pass `requireHttps` to reject plain http links.
 */
export function isUrl(value: string, requireHttps = false): boolean {
  let parsed: URL;
  try {
    parsed = new URL(value.trim());
  } catch {
    return false;
  }
  const allowed = requireHttps ? ["https:"] : ["http:", "https:"];
  return allowed.includes(parsed.protocol) && parsed.hostname.includes(".");
}

/** Accept phone numbers containing 7 to 15 digits, in any common punctuation style. */
export function isPhoneNumber(value: string): boolean {
  if (/[^\d\s()+.-]/.test(value)) return false;
  const digits = value.match(PHONE_DIGITS) ?? [];
  return digits.length >= 7 && digits.length <= 15;
}

/** Treat null, undefined, blank strings and empty arrays as "no value entered". */
export const isBlank = (value: FieldValue): boolean =>
  value === null ||
  value === undefined ||
  (typeof value === "string" && value.trim() === "") ||
  (Array.isArray(value) && value.length === 0);

/**
 * Score a password from 0 (very weak) to 4 (strong) based on its length
 * and the variety of character classes it uses, and give a short hint on
 * how to improve it.
 */
export function passwordStrength(password: string): { score: number; hint: string } {
  let score = 0;
  if (password.length >= 8) score++;
  if (password.length >= 14) score++;
  const classes = [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes >= 3) score++;
  if (classes === 4) score++;
  if (/^(.)\1+$/.test(password)) score = 0;
  const hints = [
    "Use at least 8 characters.",
    "Add more characters or mix in symbols.",
    "Mix upper and lower case letters, numbers and symbols.",
    "Nearly there: a longer password would be stronger.",
    "Strong password.",
  ];
  return { score, hint: hints[score] };
}

/**
 * Apply one declarative rule to a field value and return an error message,
 * or null when the value passes. Rules other than "required" skip blank
 * values, so optional fields are only checked once the user types
 * something. `all` holds every field value, which cross-field rules such as
 * "matches" need.
 */
export function checkRule(rule: Rule, value: FieldValue, all: Record<string, FieldValue>): string | null {
  if (rule.kind === "required") {
    return isBlank(value) ? rule.message ?? DEFAULT_MESSAGES.required : null;
  }
  if (isBlank(value)) {
    return null;
  }
  const text = Array.isArray(value) ? value.join(",") : String(value);

  switch (rule.kind) {
    case "minLength": {
      const length = Array.isArray(value) ? value.length : text.length;
      if (length < rule.value) {
        return rule.message ?? `Enter at least ${rule.value} characters.`;
      }
      return null;
    }
    case "maxLength": {
      const length = Array.isArray(value) ? value.length : text.length;
      if (length > rule.value) {
        return rule.message ?? `Enter no more than ${rule.value} characters.`;
      }
      return null;
    }
    case "pattern": {
      rule.value.lastIndex = 0;
      return rule.value.test(text) ? null : rule.message ?? "The value is not in the expected format.";
    }
    case "email":
      return isEmail(text) ? null : rule.message ?? DEFAULT_MESSAGES.email;
    case "url":
      if (!isUrl(text, rule.requireHttps)) {
        if (rule.requireHttps && isUrl(text)) {
          return rule.message ?? "The address must start with https://.";
        }
        return rule.message ?? DEFAULT_MESSAGES.url;
      }
      return null;
    case "number": {
      const numeric = typeof value === "number" ? value : Number(text.replace(/,/g, ""));
      if (Number.isNaN(numeric)) {
        return rule.message ?? DEFAULT_MESSAGES.number;
      }
      if (rule.integer && !Number.isInteger(numeric)) {
        return rule.message ?? "Enter a whole number.";
      }
      if (rule.min !== undefined && numeric < rule.min) {
        return rule.message ?? `Enter a number of at least ${rule.min}.`;
      }
      if (rule.max !== undefined && numeric > rule.max) {
        return rule.message ?? `Enter a number no greater than ${rule.max}.`;
      }
      return null;
    }
    case "oneOf": {
      const chosen = Array.isArray(value) ? value : [text];
      const invalid = chosen.filter((v) => !rule.values.includes(v));
      if (invalid.length > 0) {
        return rule.message ?? `Choose from: ${rule.values.join(", ")}.`;
      }
      return null;
    }
    case "matches": {
      const other = all[rule.field];
      if (String(other ?? "") !== text) {
        return rule.message ?? "The values do not match.";
      }
      return null;
    }
    case "date": {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
      if (!match) {
        return rule.message ?? "Enter a date as YYYY-MM-DD.";
      }
      const time = Date.parse(text);
      if (Number.isNaN(time)) {
        return rule.message ?? "Enter a real calendar date.";
      }
      if (rule.notBefore && time < Date.parse(rule.notBefore)) {
        return rule.message ?? `Choose a date on or after ${rule.notBefore}.`;
      }
      if (rule.notAfter && time > Date.parse(rule.notAfter)) {
        return rule.message ?? `Choose a date on or before ${rule.notAfter}.`;
      }
      return null;
    }
    case "custom":
      return rule.test(value, all);
    default: {
      const unreachable: never = rule;
      throw new Error(`Unknown rule ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * Validate a whole form against a schema, collecting every failing rule's
 * message for each field.
 */
export function validateForm(values: Record<string, FieldValue>, schema: Schema): ValidationResult {
  const errors: Record<string, string[]> = {};
  for (const [field, rules] of Object.entries(schema)) {
    const messages = rules
      .map((rule) => checkRule(rule, values[field], values))
      .filter((message): message is string => message !== null);
    if (messages.length > 0) {
      errors[field] = messages;
    }
  }
  return { valid: Object.keys(errors).length === 0, errors };
}

/**
 * Holds a schema and the latest errors for a form, so a UI can validate
 * fields as they are touched and show messages only for those fields.
 */
export class FormValidator {
  private errors: Record<string, string[]> = {};
  private touched = new Set<string>();

  constructor(private readonly schema: Schema) {}

  /** Mark a field as visited and re-check only that field. */
  touch(field: string, values: Record<string, FieldValue>): string[] {
    this.touched.add(field);
    const rules = this.schema[field] ?? [];
    const messages = rules
      .map((rule) => checkRule(rule, values[field], values))
      .filter((m): m is string => m !== null);
    if (messages.length > 0) {
      this.errors[field] = messages;
    } else {
      delete this.errors[field];
    }
    return messages;
  }

  /** Validate every field, mark them all as touched, and report overall validity. */
  validateAll(values: Record<string, FieldValue>): boolean {
    const result = validateForm(values, this.schema);
    Object.keys(this.schema).forEach((field) => this.touched.add(field));
    this.errors = result.errors;
    return result.valid;
  }

  /** Return the first error for a field, but only once the user has touched it. */
  visibleError(field: string): string | undefined {
    return this.touched.has(field) ? this.errors[field]?.[0] : undefined;
  }

  /** Forget all errors and touched state, for example after the form is reset. */
  reset(): void {
    this.errors = {};
    this.touched.clear();
  }
}
