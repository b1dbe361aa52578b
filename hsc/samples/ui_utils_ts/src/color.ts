/**
 * Colour helpers: parsing and converting between hex, RGB and HSL, mixing
 * colours, and checking text contrast against the WCAG guidelines.
 */

export interface Rgb {
  r: number;
  g: number;
  b: number;
  a?: number;
}

export interface Hsl {
  h: number;
  s: number;
  l: number;
}

/** Minimum contrast ratios defined by WCAG 2.1 for normal and large text. */
export const CONTRAST_THRESHOLDS = {
  AA: 4.5,
  AA_LARGE: 3,
  AAA: 7,
  AAA_LARGE: 4.5,
} as const;

export type ContrastLevel = keyof typeof CONTRAST_THRESHOLDS;

const HEX_PATTERN = /^#?([0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

/** Keep a number inside the closed interval [min, max]. */
const clamp = (value: number, min: number, max: number): number =>
  Math.min(Math.max(value, min), max);

/**
 * Parse a hex colour string such as "#1e90ff", "1e90ff" or the short form
 * "#19f" into RGB channels. Four- and eight-digit forms carry an alpha
 * channel, which is returned as a number between 0 and 1.
 */
export function hexToRgb(hex: string): Rgb {
  const match = HEX_PATTERN.exec(hex.trim());
  if (!match) {
    throw new Error(`Invalid hex colour: ${hex}`);
  }
  let digits = match[1];
  if (digits.length <= 4) {
    digits = digits
      .split("")
      .map((d) => d + d)
      .join("");
  }
  const value = parseInt(digits.slice(0, 6), 16);
  const rgb: Rgb = { r: (value >> 16) & 255, g: (value >> 8) & 255, b: value & 255 };
  if (digits.length === 8) {
    rgb.a = Math.round((parseInt(digits.slice(6, 8), 16) / 255) * 100) / 100;
  }
  return rgb;
}

/**
 * Format RGB channels as a lowercase six-digit hex string. Channel values
 * are rounded and clamped to 0..255 first, so slightly out-of-range results
 * from arithmetic do not produce invalid output.
 */
export function rgbToHex({ r, g, b }: Rgb): string {
  const toHex = (channel: number): string =>
    clamp(Math.round(channel), 0, 255).toString(16).padStart(2, "0");
  return `#${toHex(r)}${toHex(g)}${toHex(b)}`;
}

/**
 * Convert RGB to HSL. Hue is returned in degrees (0-360), saturation and
 * lightness as percentages (0-100).
 */
export function rgbToHsl({ r, g, b }: Rgb): Hsl {
  const rn = r / 255;
  const gn = g / 255;
  const bn = b / 255;
  const max = Math.max(rn, gn, bn);
  const min = Math.min(rn, gn, bn);
  const l = (max + min) / 2;
  if (max === min) {
    return { h: 0, s: 0, l: Math.round(l * 100) };
  }
  const d = max - min;
  const s = l > 0.5 ? d / (2 - max - min) : d / (max + min);
  let h: number;
  if (max === rn) {
    h = (gn - bn) / d + (gn < bn ? 6 : 0);
  } else if (max === gn) {
    h = (bn - rn) / d + 2;
  } else {
    h = (rn - gn) / d + 4;
  }
  return { h: Math.round(h * 60), s: Math.round(s * 100), l: Math.round(l * 100) };
}

/**
 * Convert HSL back to RGB. Accepts hue in degrees and saturation and
 * lightness in percent; hue values outside 0-360 wrap around.
 */
export function hslToRgb({ h, s, l }: Hsl): Rgb {
  const hue = (((h % 360) + 360) % 360) / 360;
  const sat = clamp(s, 0, 100) / 100;
  const light = clamp(l, 0, 100) / 100;
  if (sat === 0) {
    const grey = Math.round(light * 255);
    return { r: grey, g: grey, b: grey };
  }
  const hueToChannel = (p: number, q: number, t: number): number => {
    let tt = t;
    if (tt < 0) tt += 1;
    if (tt > 1) tt -= 1;
    if (tt < 1 / 6) return p + (q - p) * 6 * tt;
    if (tt < 1 / 2) return q;
    if (tt < 2 / 3) return p + (q - p) * (2 / 3 - tt) * 6;
    return p;
  };
  const q = light < 0.5 ? light * (1 + sat) : light + sat - light * sat;
  const p = 2 * light - q;
  return {
    r: Math.round(hueToChannel(p, q, hue + 1 / 3) * 255),
    g: Math.round(hueToChannel(p, q, hue) * 255),
    b: Math.round(hueToChannel(p, q, hue - 1 / 3) * 255),
  };
}

/**
 * Compute the relative luminance of a colour as defined by WCAG, a value
 * between 0 (black) and 1 (white) that accounts for how the eye perceives
 * each channel.
 */
export function relativeLuminance({ r, g, b }: Rgb): number {
  const linear = [r, g, b].map((channel) => {
    const c = channel / 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
}

/**
 * Work out the contrast ratio between two colours, from 1:1 (identical)
 * up to 21:1 (black on white). The order of the arguments does not matter.
 */
export function contrastRatio(foreground: string, background: string): number {
  const l1 = relativeLuminance(hexToRgb(foreground));
  const l2 = relativeLuminance(hexToRgb(background));
  const lighter = Math.max(l1, l2);
  const darker = Math.min(l1, l2);
  return Math.round(((lighter + 0.05) / (darker + 0.05)) * 100) / 100;
}

/** Check whether a text/background pair meets the requested WCAG level. */
export const meetsContrast = (
  foreground: string,
  background: string,
  level: ContrastLevel = "AA",
): boolean => contrastRatio(foreground, background) >= CONTRAST_THRESHOLDS[level];

/**
 * Pick whichever of two candidate text colours reads better on a given
 * background. Defaults to choosing between black and white.
 */
export function readableTextColor(background: string, dark = "#000000", light = "#ffffff"): string {
  return contrastRatio(dark, background) >= contrastRatio(light, background) ? dark : light;
}

/**
 * Blend two hex colours. A weight of 0 returns the first colour, 1 returns
 * the second, and values in between mix the channels linearly.
 */
export function mix(first: string, second: string, weight = 0.5): string {
  const w = clamp(weight, 0, 1);
  const a = hexToRgb(first);
  const b = hexToRgb(second);
  return rgbToHex({
    r: a.r + (b.r - a.r) * w,
    g: a.g + (b.g - a.g) * w,
    b: a.b + (b.b - a.b) * w,
  });
}

/**
 * Make a colour lighter or darker by shifting its HSL lightness by the
 * given number of percentage points (negative values darken).
 */
export function adjustLightness(hex: string, amount: number): string {
  const hsl = rgbToHsl(hexToRgb(hex));
  return rgbToHex(hslToRgb({ ...hsl, l: clamp(hsl.l + amount, 0, 100) }));
}

/**
 * Generate a tonal palette of evenly spaced shades from a base colour,
 * named 50, 100, 200 ... 900 in the style of common design systems.
 */
export function buildPalette(base: string): Record<string, string> {
  const steps = [50, 100, 200, 300, 400, 500, 600, 700, 800, 900];
  const { h, s } = rgbToHsl(hexToRgb(base));
  const palette: Record<string, string> = {};
  steps.forEach((step, index) => {
    const lightness = 95 - index * 9;
    palette[String(step)] = rgbToHex(hslToRgb({ h, s, l: lightness }));
  });
  return palette;
}
