// The label selectors the in-memory fakes answer: equality (`key=value`) and existence (`key`) terms,
// comma-separated, the only kinds the lifecycle sends. Anything else throws, so a phase that starts
// sending another kind fails loudly instead of being answered wrongly.
type Term = { key: string; value?: string };

export function equalitySelector(
  labelSelector: string,
): (labels: Record<string, string> | undefined) => boolean {
  const terms = labelSelector.split(',').map((term): Term => {
    const [key, value, ...rest] = term.split('=');
    if (key === undefined || key === '' || rest.length > 0 || /[!<>() ]/.test(key)) {
      throw new Error(`label selector "${labelSelector}" is not faked`);
    }
    return value === undefined ? { key } : { key, value };
  });
  return (labels) =>
    terms.every(({ key, value }) =>
      value === undefined ? labels?.[key] !== undefined : labels?.[key] === value,
    );
}
