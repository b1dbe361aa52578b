import React, { useCallback, useState } from "react";
import { classNames } from "../dom";
import { readableTextColor } from "../color";

export type ButtonVariant = "primary" | "secondary" | "danger" | "ghost";
export type ButtonSize = "sm" | "md" | "lg";

export interface ButtonProps {
  children: React.ReactNode;
  variant?: ButtonVariant;
  size?: ButtonSize;
  disabled?: boolean;
  loading?: boolean;
  accentColor?: string;
  icon?: React.ReactNode;
  onClick?: (event: React.MouseEvent<HTMLButtonElement>) => void | Promise<void>;
}

const SIZE_CLASSES: Record<ButtonSize, string> = {
  sm: "btn--sm",
  md: "btn--md",
  lg: "btn--lg",
};

/** A small spinning indicator shown inside a button while its action runs. */
const Spinner = ({ label = "Loading" }: { label?: string }) => (
  <span className="btn__spinner" role="status" aria-label={label}>
    <span className="btn__spinner-dot" />
  </span>
);

/**
 * Compute inline styles for a custom accent colour, choosing black or white
 * text so that the label stays readable on the chosen background.
 */
function accentStyle(accentColor?: string): React.CSSProperties | undefined {
  if (!accentColor) {
    return undefined;
  }
  return {
    backgroundColor: accentColor,
    borderColor: accentColor,
    color: readableTextColor(accentColor),
  };
}

/**
 * A button that shows a spinner and ignores further clicks while its
 * click handler's promise is pending, so users cannot submit a form twice.
 */
export function Button({
  children,
  variant = "primary",
  size = "md",
  disabled = false,
  loading = false,
  accentColor,
  icon,
  onClick,
}: ButtonProps) {
  const [pending, setPending] = useState(false);
  const busy = loading || pending;

  const handleClick = useCallback(
    async (event: React.MouseEvent<HTMLButtonElement>) => {
      if (busy || disabled || !onClick) return;
      const result = onClick(event);
      if (result && typeof (result as Promise<void>).then === "function") {
        setPending(true);
        try {
          await result;
        } finally {
          setPending(false);
        }
      }
    },
    [busy, disabled, onClick],
  );

  const className = classNames("btn", `btn--${variant}`, SIZE_CLASSES[size], {
    "btn--busy": busy,
    "btn--icon-only": !children && Boolean(icon),
  });

  return (
    <button
      type="button"
      className={className}
      style={accentStyle(accentColor)}
      disabled={disabled || busy}
      aria-busy={busy}
      onClick={handleClick}
    >
      {busy ? <Spinner /> : icon}
      {children && <span className="btn__label">{children}</span>}
    </button>
  );
}

/** A row of buttons with consistent spacing, optionally stretched to full width. */
export const ButtonGroup = ({ children, fullWidth = false }: { children: React.ReactNode; fullWidth?: boolean }) => (
  <div className={classNames("btn-group", { "btn-group--full": fullWidth })} role="group">
    {children}
  </div>
);

export default Button;
