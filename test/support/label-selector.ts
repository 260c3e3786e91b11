// The label selectors the in-memory fakes answer: equality terms (`key=value`, comma-separated), the only
// kind the lifecycle sends. Anything else throws, so a phase that starts sending another kind fails
// loudly instead of being answered wrongly.
export function equalitySelector(
  labelSelector: string,
): (labels: Record<string, string> | undefined) => boolean {
  const wanted = labelSelector.split(',').map((term) => {
    const [key, value, ...rest] = term.split('=');
    if (key === undefined || value === undefined || rest.length > 0 || key.endsWith('!')) {
      throw new Error(`label selector "${labelSelector}" is not faked`);
    }
    return [key, value] as const;
  });
  return (labels) => wanted.every(([key, value]) => labels?.[key] === value);
}
