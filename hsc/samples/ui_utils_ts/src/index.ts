export * from "./color";
export * from "./dates";
export * from "./dom";
export * from "./format";
export * from "./validation";
export { Button, ButtonGroup } from "./components/Button";
