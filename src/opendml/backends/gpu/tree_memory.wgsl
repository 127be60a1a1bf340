    return {NAME}_share[home];
